"""How the events API and the portal read the event log with its delivery state."""

from __future__ import annotations

import json
from typing import Any

from infra.clock import iso
from infra.database import Database
from views.events import Attempt, EventOut
from webhooks.deliveries import attempts_of

EVENTS_FROM = "webhook_events e LEFT JOIN webhook_deliveries d ON d.event_id = e.id"
EVENT_COLUMNS = (
    "e.id, e.position, e.tenant, e.type, e.resource_id, e.envelope, "
    "COALESCE(d.status, 'pending') AS status, COALESCE(d.attempts, 0) AS attempt_count, "
    "d.next_attempt_at, d.delivered_at"
)
STATUS_SQL = "COALESCE(d.status, 'pending') = ?"


def _iso_or_none(value: float | None) -> str | None:
    return None if value is None else iso(float(value))


def render_attempt(row: dict[str, Any]) -> Attempt:
    """A `webhook_attempts` row (a DB cursor's row) as answered."""
    return Attempt(
        number=int(row["number"]),
        attempted_at=iso(float(row["attempted_at"])),
        status_code=row["status_code"],
        error=row["error"],
        duration_ms=float(row["duration_ms"]),
        succeeded=bool(row["succeeded"]),
    )


def render_event(row: dict[str, Any], attempts: list[dict[str, Any]]) -> EventOut:
    """An `EVENT_COLUMNS` row and its attempts' rows as answered."""
    envelope = json.loads(row["envelope"])
    pending = row["status"] == "pending"
    return EventOut(
        id=row["id"],
        type=row["type"],
        created_at=envelope["created_at"],
        resource_id=row["resource_id"],
        data=envelope["data"],
        status=row["status"],
        attempt_count=int(row["attempt_count"]),
        next_attempt_at=_iso_or_none(row["next_attempt_at"]) if pending else None,
        delivered_at=_iso_or_none(row["delivered_at"]),
        attempts=[render_attempt(a) for a in attempts],
    )


def render_page(db: Database, rows: list[dict[str, Any]]) -> list[EventOut]:
    with db.read() as cur:
        attempts = attempts_of(cur, [row["id"] for row in rows])
    return [render_event(row, attempts[row["id"]]) for row in rows]


def event_row(db: Database, tenant: str, event_id: str) -> dict[str, Any] | None:
    with db.read() as cur:
        row: dict[str, Any] | None = cur.execute(
            f"SELECT {EVENT_COLUMNS} FROM {EVENTS_FROM} WHERE e.id = ? AND e.tenant = ?",
            (event_id, tenant),
        ).fetchone()
    return row


def one_event(db: Database, tenant: str, event_id: str) -> EventOut | None:
    row = event_row(db, tenant, event_id)
    if row is None:
        return None
    with db.read() as cur:
        attempts = attempts_of(cur, [event_id])[event_id]
    return render_event(row, attempts)
