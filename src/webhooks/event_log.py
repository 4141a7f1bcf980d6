"""The organization's public events, recorded from the notification log (so the events API
works with no webhook URL and no NATS), plus the delivery tables the dispatcher writes.

`position` is notification id * POSITION_STRIDE + index: unique per public event and in log
order, for keyset paging. The stride bounds how many public events one stored event may map to
(an order's completion: one `domain.connected` per domain); a store written with the earlier
stride of 64 is renumbered once, at the first start that finds it (`_renumber`).
"""

from __future__ import annotations

from typing import Any

from infra.clock import iso
from infra.store import EventStore
from projections.base import ReadModel
from projections.json_text import compact_json_text
from webhooks.mappers import load_mappers
from webhooks.public_events import MAPPERS, PUBLISHED_LAST, PublicEvent, public_events_for

POSITION_STRIDE = 1 << 20
_FIRST_STRIDE = 64


def publishing_rank(position: int, type_: str) -> tuple[int, bool, int]:
    """Sorts recorded events in the order they were first published."""
    return position // POSITION_STRIDE, type_ in PUBLISHED_LAST, position

DELIVERY_DDL = (
    "CREATE TABLE IF NOT EXISTS webhook_deliveries (event_id TEXT PRIMARY KEY, "
    "tenant TEXT NOT NULL, org_id TEXT NOT NULL, payload TEXT NOT NULL, status TEXT NOT NULL, "
    "attempts INTEGER NOT NULL DEFAULT 0, round_attempts INTEGER NOT NULL DEFAULT 0, "
    "next_attempt_at DOUBLE PRECISION, claimed_until DOUBLE PRECISION, "
    "delivered_at DOUBLE PRECISION, updated_at DOUBLE PRECISION NOT NULL)",
    "CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries "
    "(status, next_attempt_at)",
    "CREATE TABLE IF NOT EXISTS webhook_attempts (event_id TEXT NOT NULL, number INTEGER NOT NULL, "
    "attempted_at DOUBLE PRECISION NOT NULL, status_code INTEGER, error TEXT, "
    "duration_ms DOUBLE PRECISION NOT NULL, succeeded BOOLEAN NOT NULL, "
    "PRIMARY KEY (event_id, number))",
    # Running totals by outcome for /metrics: counting the attempts table on every scrape
    # would read a table that only grows.
    "CREATE TABLE IF NOT EXISTS webhook_attempt_totals (outcome TEXT PRIMARY KEY, "
    "attempts BIGINT NOT NULL)",
)


def envelope_of(event: PublicEvent) -> dict[str, Any]:
    return {"id": event.id, "type": event.type, "created_at": iso(event.created_at), "data": event.data}


class WebhookEventLog(ReadModel):
    replay_weight = 5
    name = "webhook_events"
    tables = ("webhook_events",)
    ddl = (
        "CREATE TABLE IF NOT EXISTS webhook_events (id TEXT PRIMARY KEY, position BIGINT NOT NULL, "
        "tenant TEXT NOT NULL, type TEXT NOT NULL, resource_id TEXT NOT NULL, "
        "created_at DOUBLE PRECISION NOT NULL, envelope TEXT NOT NULL)",
        "CREATE UNIQUE INDEX IF NOT EXISTS webhook_events_position ON webhook_events (position)",
        "CREATE INDEX IF NOT EXISTS webhook_events_tenant ON webhook_events (tenant, position)",
        *DELIVERY_DDL,
    )

    store: EventStore | None = None

    def attach(self, store: Any) -> None:
        load_mappers()
        self.store = store

    def create_tables(self, cur: Any) -> None:
        super().create_tables(cur)
        _renumber(cur)

    def handles(self, event_name: str) -> bool:
        return event_name in MAPPERS

    def apply(self, cur: Any, event: Any, position: int) -> None:
        # Every mapped event, whichever capability registered it: no @on list to keep in sync.
        if self.store is None or type(event).__qualname__ not in MAPPERS:
            return
        for index, public in enumerate(public_events_for(event, self.store)):
            cur.execute(
                "INSERT INTO webhook_events (id, position, tenant, type, resource_id, created_at, "
                "envelope) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                (
                    public.id,
                    position * POSITION_STRIDE + index,
                    public.tenant,
                    public.type,
                    public.resource_id,
                    public.created_at,
                    compact_json_text(envelope_of(public)),
                ),
            )


def _renumber(cur: Any) -> None:
    """Positions of the first stride move to this one, once: the stride a store's positions
    were written with is recorded beside them (a store with events and no record: the first).
    Of processes starting together, one takes the record's row and the others then find it
    renumbered."""
    cur.execute(
        "CREATE TABLE IF NOT EXISTS webhook_event_stride (id INTEGER PRIMARY KEY, "
        "stride BIGINT NOT NULL)"
    )
    cur.execute(
        "INSERT INTO webhook_event_stride (id, stride) SELECT 1, CASE WHEN EXISTS "
        f"(SELECT 1 FROM webhook_events) THEN {_FIRST_STRIDE} ELSE {POSITION_STRIDE} END "
        "WHERE true ON CONFLICT (id) DO NOTHING"
    )
    moved = cur.execute(
        "UPDATE webhook_event_stride SET stride = ? WHERE id = 1 AND stride = ? RETURNING id",
        (POSITION_STRIDE, _FIRST_STRIDE),
    ).fetchone()
    if moved is None:
        return
    # Through negative numbers: no position is ever held by two rows on the way.
    cur.execute("UPDATE webhook_events SET position = -position - 1")
    # With x the old position: x / 64 * (stride - 64) + x, in integer division (no `%`: psycopg
    # reads it as a placeholder).
    cur.execute(
        "UPDATE webhook_events SET position = ((-position - 1) / ?) * (? - ?) - position - 1",
        (_FIRST_STRIDE, POSITION_STRIDE, _FIRST_STRIDE),
    )
