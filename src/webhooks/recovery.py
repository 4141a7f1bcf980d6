"""Bulk redelivery (decisions 7): after a receiver's outage, send every event of a tenant
created since a moment again, optionally only those in one delivery status.

Each event keeps its `evt_` id and gets one new attempt, made oldest first: an event that
was delivered or failed starts a round of a single attempt (its failure marks it `failed`
again at once, rather than starting a day of retries for a receiver that may still be down);
a pending event has its next attempt brought forward to now and keeps the rest of its
round. The dispatcher makes the attempts as it makes every other.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from domain.errors import NotFound
from infra.clock import real_now
from infra.database import Database
from views.events import EventOut, RedeliveredOut
from webhooks.commands import RedeliverEvents
from webhooks.deliveries import CHUNK, attempts_allowed, redeliver
from webhooks.event_log import publishing_rank
from webhooks.events_view import EVENTS_FROM, STATUS_SQL, event_row, one_event, sandbox_times

if TYPE_CHECKING:
    from runtime.container import Container

# Apart by this much, the attempts are due in the events' own order: the dispatcher claims
# due rows by `next_attempt_at`.
ORDER_STEP_SECONDS = 1e-6


def matching_events(
    db: Database, tenant: str, since: float, status: str | None
) -> list[dict[str, Any]]:
    """The tenant's events created at or after `since` (in `status`, when given), oldest
    first, and those of one moment in the order they were first sent."""
    where = ["e.tenant = ?", "e.created_at >= ?"]
    params: list[object] = [tenant, since]
    if status is not None:
        where.append(STATUS_SQL)
        params.append(status)
    with db.read() as cur:
        rows: list[dict[str, Any]] = cur.execute(
            f"SELECT e.id, e.tenant, e.type, e.position, e.created_at, e.envelope FROM {EVENTS_FROM} "
            f"WHERE {' AND '.join(where)} ORDER BY e.created_at, e.position",
            tuple(params),
        ).fetchall()
    rows.sort(key=lambda row: (row["created_at"], *publishing_rank(row["position"], row["type"])))
    return rows


def redeliver_since(
    db: Database,
    tenant: str,
    org_id: str,
    since: float,
    status: str | None,
    now: float,
    schedule: Sequence[float],
) -> int:
    """Queue one new attempt for each matching event; returns how many."""
    events = matching_events(db, tenant, since, status)
    # The round already used up but one: the attempt that follows is the round's last.
    last_of_round = attempts_allowed(schedule) - 1
    with db.transaction() as cur:
        for start in range(0, len(events), CHUNK):
            chunk = events[start : start + CHUNK]
            _queue(cur, chunk, org_id, now + start * ORDER_STEP_SECONDS, last_of_round)
    return len(events)


def redeliver_events(
    container: Container, tenant: str, org_id: str, command: RedeliverEvents
) -> RedeliveredOut:
    """`POST /events/redeliver`: the tenant's events since `command.since` again."""
    count = redeliver_since(
        container.read_db,
        tenant,
        org_id,
        to_the_millisecond(command.since).timestamp(),
        command.status,
        real_now(container.clock),  # due now for the dispatcher, whatever the sandbox's clock
        container.settings.webhook_retry_schedule,
    )
    return RedeliveredOut(redelivered=count)


def to_the_millisecond(since: datetime) -> datetime:
    """`since` compares with the envelope's `created_at`, which shows whole milliseconds: a
    finer `since` matches from the next millisecond on (an envelope of `.305Z` is before
    `.3058Z`)."""
    extra = since.microsecond % 1000
    return since + timedelta(microseconds=1000 - extra) if extra else since


def redeliver_event(container: Container, tenant: str, org_id: str, event_id: str) -> EventOut:
    """`POST /events/{event_id}/redeliver`: one more round for one of the tenant's events;
    answers the event as it is then."""
    row = event_row(container.read_db, tenant, event_id)
    if row is None:
        raise NotFound("event")
    redeliver(container.read_db, row, org_id, real_now(container.clock))
    found = one_event(container.read_db, tenant, event_id, sandbox_times(container, tenant))
    if found is None:
        raise NotFound("event")
    return found


def _queue(
    cur: Any, events: Sequence[dict[str, Any]], org_id: str, first_at: float, last_of_round: int
) -> None:
    rows = ", ".join("(?, ?, ?, ?, 'pending', ?, ?)" for _ in events)
    params = [
        value
        for index, event in enumerate(events)
        for value in (
            event["id"],
            event["tenant"],
            org_id,
            event["envelope"],
            first_at + index * ORDER_STEP_SECONDS,
            first_at,
        )
    ]
    # A row still pending keeps its round; a finished one gets a round of one attempt. A row
    # the dispatcher has not made yet is inserted as it would have made it.
    cur.execute(
        "INSERT INTO webhook_deliveries (event_id, tenant, org_id, payload, status, "
        f"next_attempt_at, updated_at) VALUES {rows} "
        "ON CONFLICT (event_id) DO UPDATE SET "
        "round_attempts = CASE WHEN webhook_deliveries.status = 'pending' "
        "THEN webhook_deliveries.round_attempts ELSE ? END, "
        "status = 'pending', next_attempt_at = excluded.next_attempt_at, "
        "claimed_until = NULL, updated_at = excluded.updated_at",
        (*params, last_of_round),
    )
