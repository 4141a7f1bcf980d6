"""How the events API and the portal read the event log with its delivery state."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from infra.clock import SANDBOX, iso
from infra.database import Database
from views.events import Attempt, EventOut
from webhooks.deliveries import attempts_of

if TYPE_CHECKING:
    from runtime.container import Container

EVENTS_FROM = "webhook_events e LEFT JOIN webhook_deliveries d ON d.event_id = e.id"
EVENT_COLUMNS = (
    "e.id, e.position, e.tenant, e.type, e.resource_id, e.envelope, "
    "COALESCE(d.status, 'pending') AS status, COALESCE(d.attempts, 0) AS attempt_count, "
    "d.next_attempt_at, d.delivered_at"
)
STATUS_SQL = "COALESCE(d.status, 'pending') = ?"


@dataclass(frozen=True)
class SandboxTimes:
    """A sandbox's time beside real time, read once for a page of its events."""

    real_now: float
    sandbox_now: float


def sandbox_times(container: Container, tenant: str) -> SandboxTimes | None:
    org_id, environment = tenant.rsplit(":", 1)
    if environment != SANDBOX:
        return None
    return SandboxTimes(container.clock.real_now(), container.clock.sandbox_now(org_id))


def _iso_or_none(value: float | None) -> str | None:
    return None if value is None else iso(float(value))


def _next_attempt_at(value: float | None, times: SandboxTimes | None) -> str | None:
    """When the next attempt comes. A first delivery or a redelivery is queued on real time,
    for the dispatcher to make at once: in a sandbox whose clock was moved on, that is its
    `now` (decisions 6: a sandbox's timestamps read its clock), not a real time before it."""
    if value is not None and times is not None and float(value) <= times.real_now:
        return iso(max(float(value), times.sandbox_now))
    return _iso_or_none(value)


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


def render_event(
    row: dict[str, Any], attempts: list[dict[str, Any]], times: SandboxTimes | None = None
) -> EventOut:
    """An `EVENT_COLUMNS` row and its attempts' rows as answered (`times`: a sandbox's)."""
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
        next_attempt_at=_next_attempt_at(row["next_attempt_at"], times) if pending else None,
        delivered_at=_iso_or_none(row["delivered_at"]),
        attempts=[render_attempt(a) for a in attempts],
    )


def render_page(
    db: Database, rows: list[dict[str, Any]], times: SandboxTimes | None = None
) -> list[EventOut]:
    with db.read() as cur:
        attempts = attempts_of(cur, [row["id"] for row in rows])
    return [render_event(row, attempts[row["id"]], times) for row in rows]


def event_row(db: Database, tenant: str, event_id: str) -> dict[str, Any] | None:
    with db.read() as cur:
        row: dict[str, Any] | None = cur.execute(
            f"SELECT {EVENT_COLUMNS} FROM {EVENTS_FROM} WHERE e.id = ? AND e.tenant = ?",
            (event_id, tenant),
        ).fetchone()
    return row


def one_event(
    db: Database, tenant: str, event_id: str, times: SandboxTimes | None = None
) -> EventOut | None:
    row = event_row(db, tenant, event_id)
    if row is None:
        return None
    with db.read() as cur:
        attempts = attempts_of(cur, [event_id])[event_id]
    return render_event(row, attempts, times)
