"""The pool as read models: `pool_domains` (GET /pool/domains, attach candidates) and
`pool_jobs` (the pool worker's to-do list of reservations and releases in progress).

A pool domain's row keeps the position of its first appearance, so pages stay stable while
domains change condition. Warm-up and quarantine end on the clock, so the stored condition is
`warming` / `idle_quarantined` with `available_at`; readers compare it with now.

A row's `doc` is the `views/pool.py` `PoolDomainOut` the list answers. Written by the pool use
cases (`services/pool/`: `inventory.py`, `attach.py` for the pool attach, `replacements.py`);
read by `GET /pool/domains` (`gateway/rest/pool.py`), attach candidates
(`services/pool/records.take_available`) and the pool worker (`workers/pool.py`).
"""

from __future__ import annotations

from typing import Any

import msgspec

from domain.events import event_names
from domain.pool_domains import AVAILABLE, IDLE_QUARANTINED, WARMING, PoolDomain
from domain.pool_releases import PoolRelease
from domain.pool_reservations import PoolReservation
from infra.ids import public_id
from projections.base import ReadModel, on
from projections.json_text import json_text
from views.pool import PoolDomainOut, pool_domain_view

POOL_DOMAIN_EVENTS = (
    PoolDomain.Tracked,
    PoolDomain.Added,
    PoolDomain.Removed,
    PoolDomain.Reserved,
    PoolDomain.Assigned,
    PoolDomain.Unreserved,
    PoolDomain.ReleaseStarted,
    PoolDomain.Released,
    PoolDomain.Burned,
    PoolDomain.Retired,
    PoolDomain.Lapsed,
)
_JOB_EVENTS = {
    PoolReservation.Requested: "pcl",
    PoolReservation.Completed: "pcl",
    PoolReservation.Failed: "pcl",
    PoolRelease.Requested: "prl",
    PoolRelease.Completed: "prl",
}
POOL_JOB_EVENTS = frozenset(event_names(*_JOB_EVENTS))


class PoolReadModel(ReadModel):
    name = "pool"
    tables = ("pool_domains", "pool_jobs")
    ddl = (
        "CREATE TABLE IF NOT EXISTS pool_domains (key TEXT PRIMARY KEY, position BIGINT NOT NULL, "
        "tenant TEXT NOT NULL, name TEXT NOT NULL, dom_id TEXT, condition TEXT NOT NULL, "
        "available_at DOUBLE PRECISION, burned BOOLEAN NOT NULL, doc TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS pool_domains_tenant ON pool_domains (tenant, position)",
        "CREATE INDEX IF NOT EXISTS pool_domains_condition ON pool_domains (tenant, condition)",
        "CREATE INDEX IF NOT EXISTS pool_domains_name ON pool_domains (tenant, name)",
        "CREATE TABLE IF NOT EXISTS pool_jobs (id TEXT PRIMARY KEY, kind TEXT NOT NULL, "
        "tenant TEXT NOT NULL, position BIGINT NOT NULL, status TEXT NOT NULL, "
        "created_at DOUBLE PRECISION NOT NULL)",
        "CREATE INDEX IF NOT EXISTS pool_jobs_status ON pool_jobs (status, position)",
    )

    def attach(self, store: Any) -> None:
        self.store = store

    def _at_version(self, event: Any) -> Any:
        return self.store.repository.get(event.originator_id, version=event.originator_version)

    @on(*POOL_DOMAIN_EVENTS)
    def pool_domain_changed(self, cur: Any, event: Any, position: int) -> None:
        domain: PoolDomain = self._at_version(event)
        doc = pool_domain_view(domain, float("-inf"))  # the stored condition, not today's
        cur.execute(
            "INSERT INTO pool_domains (key, position, tenant, name, dom_id, condition, "
            "available_at, burned, doc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (key) DO UPDATE SET dom_id = excluded.dom_id, "
            "condition = excluded.condition, available_at = excluded.available_at, "
            "burned = excluded.burned, doc = excluded.doc",
            (
                domain.id.hex,
                position,
                domain.tenant,
                domain.name,
                domain.dom_id,
                domain.condition,
                domain.available_at,
                domain.burned,
                json_text(msgspec.to_builtins(doc)),  # json.dumps text, as ever
            ),
        )

    @on(*_JOB_EVENTS)
    def job_changed(self, cur: Any, event: Any, position: int) -> None:
        job = self._at_version(event)
        kind = _JOB_EVENTS[type(event)]
        cur.execute(
            "INSERT INTO pool_jobs (id, kind, tenant, position, status, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET status = excluded.status",
            (public_id(kind, job.id), kind, job.tenant, position, job.status, job.created_at),
        )


def render_pool_row(row: dict[str, Any], now: float) -> PoolDomainOut:
    """The stored view with today's condition (warm-up and quarantine end on the clock)."""
    view = msgspec.json.decode(row["doc"], type=PoolDomainOut)
    ready = row["available_at"] is not None and row["available_at"] <= now
    if row["condition"] in (WARMING, IDLE_QUARANTINED) and ready:
        return msgspec.structs.replace(view, condition=AVAILABLE, available_at=None)
    return view


def condition_clause(condition: str, now: float) -> tuple[str, Any]:
    """(SQL with one `?`, value) for `condition` as seen at `now` (the list helper's shape)."""
    if condition == AVAILABLE:
        return (
            "(condition = 'available' OR (condition IN ('warming', 'idle_quarantined') "
            "AND available_at <= ?))",
            now,
        )
    if condition in (WARMING, IDLE_QUARANTINED):
        return f"(condition = '{condition}' AND available_at > ?)", now
    return "condition = ?", condition


def due_jobs(cur: Any, before: float, limit: int = 50) -> list[str]:
    """Ids of reservations and releases in progress: sandbox ones at once, live ones created at
    or before `before`."""
    rows = cur.execute(
        "SELECT id FROM pool_jobs WHERE status = 'in_progress' "
        "AND (created_at <= ? OR tenant LIKE ?) ORDER BY position LIMIT ?",
        (before, "%:test", limit),
    ).fetchall()
    return [row["id"] for row in rows]
