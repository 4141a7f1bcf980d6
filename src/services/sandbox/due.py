"""What comes due on a sandbox clock (decisions.md 6), found and run for one organization.

Each item is run by the same load-decide-save use case its worker runs, on the aggregate's
version check: two advances of one clock (or an advance and a worker) racing for an item run
it once, and only the one that saved it counts it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx

from domain.orders import CANCEL_SCHEDULED, Order
from infra.clock import SANDBOX
from infra.ids import parse_id
from services.domains.renewals import LAPSES, RENEWS, due_terms, run_term
from services.orders.use_cases import finalize_cancel
from services.swaps.use_cases import detach_warm_domain
from webhooks.deliveries import Due, Outcome, claim_due_of_tenant, record_attempts, renew_claim
from webhooks.endpoints import Endpoint, endpoints_of
from webhooks.lanes import CONNECTIONS_PER_ORG, in_due_order
from webhooks.sender import WebhookSender
from webhooks.signing import signed_headers

if TYPE_CHECKING:
    from infra.settings import Settings
    from runtime.container import Container

GRACE_WINDOWS, WARM_PERIODS, WEBHOOK_ATTEMPTS = "grace_windows", "warm_periods", "webhook_attempts"
RENEWALS = RENEWS
KINDS = (GRACE_WINDOWS, WARM_PERIODS, RENEWALS, LAPSES, WEBHOOK_ATTEMPTS)


@dataclass(frozen=True, order=True)
class DueItem:
    due_at: float
    kind: str
    ref: str


def due_items(container: Container, org_id: str, due_by: float) -> list[DueItem]:
    """Everything of this sandbox due by `due_by` but webhook attempts, in time order."""
    tenant = f"{org_id}:{SANDBOX}"
    items: list[DueItem] = []
    with container.read_db.read() as cur:
        scheduled = cur.execute(
            "SELECT id FROM orders WHERE tenant = ? AND status = ?", (tenant, CANCEL_SCHEDULED)
        ).fetchall()
        warm = cur.execute(
            "SELECT id, warm_until FROM swaps WHERE tenant = ? AND status = 'completed' "
            "AND warm_until IS NOT NULL AND warm_until <= ? AND old_domain_detached = ?",
            (tenant, due_by, False),
        ).fetchall()
    for row in scheduled:
        order = container.store.find(parse_id("ord", row["id"]), Order)
        ends = order.cancel_after if isinstance(order, Order) else None
        if ends is not None and ends <= due_by:
            items.append(DueItem(ends, GRACE_WINDOWS, row["id"]))
    items += [DueItem(float(r["warm_until"]), WARM_PERIODS, r["id"]) for r in warm]
    with container.read_db.read() as cur:
        terms = due_terms(cur, "tenant = ?", tenant, due_by)
    items += [DueItem(due, kind, dom_id) for due, kind, dom_id in terms]
    return sorted(items)


def end_grace_window(container: Container, order_id: str) -> bool:
    """The cancellation's grace window is over (the clock is pinned at its end)."""

    def run() -> bool:
        order = container.store.find(parse_id("ord", order_id), Order)
        at = container.clock.now()
        if (
            not isinstance(order, Order)
            or order.status != CANCEL_SCHEDULED
            or order.cancel_after is None
            or order.cancel_after > at
        ):
            return False
        others = finalize_cancel(container, order, at)
        container.store.save(order, *others)
        return True

    return container.unit_of_work.retrying(run)


# Each returns whether it ran the item, or the kind it ran it as (a renewal whose payment
# grace is over lapses instead).
RUNNERS: dict[str, Callable[[Container, str], bool | str | None]] = {
    GRACE_WINDOWS: end_grace_window,
    WARM_PERIODS: detach_warm_domain,
    RENEWALS: run_term,
    LAPSES: run_term,
}


def attempt_due_webhooks(container: Container, org_id: str, now: float) -> int:
    """Make one attempt of each delivery of this sandbox due by its time `now`. A failed
    attempt schedules the next from `now`, so one advance never runs a whole retry chain.
    Envelopes and the signature's timestamp stay on real time."""
    settings = container.settings
    lease = settings.webhook_timeout_seconds + 5.0
    claimed = claim_due_of_tenant(
        container.read_db, f"{org_id}:{SANDBOX}", now, container.clock.real_now(), lease
    )
    if not claimed:
        return 0
    endpoint = endpoints_of(container).endpoint(org_id)

    def still_ours(due: Due) -> bool:
        return renew_claim(container.read_db, due, container.clock.real_now() + lease)

    def record(outcome: tuple[str, Outcome]) -> None:
        # At once: a lease runs out one time-out after its post began, however many follow.
        record_attempts(container.read_db, [outcome], settings.webhook_retry_schedule, now)

    return asyncio.run(
        _post_each(settings, endpoint, claimed, now, container.clock.real_now, still_ours, record)
    )


async def _post_each(
    settings: Settings,
    endpoint: Endpoint | None,
    claimed: list[Due],
    now: float,
    real_now: Callable[[], float],
    still_ours: Callable[[Due], bool],
    record: Callable[[tuple[str, Outcome]], None],
) -> int:
    """How many attempts were made, each recorded as it ended."""
    if endpoint is None:
        for due in claimed:
            record((due.event_id, Outcome(now, 0.0, None, "no webhook endpoint registered")))
        return len(claimed)
    sender = WebhookSender(
        settings.webhook_timeout_seconds, settings.allow_http_webhooks, CONNECTIONS_PER_ORG,
        httpx.create_ssl_context(),
    )
    # No more posts at once than connections: one waiting for a connection would time out
    # unsent.
    slots = asyncio.Semaphore(CONNECTIONS_PER_ORG)

    async def attempt(due: Due) -> bool:
        async with slots:
            # Its lease ran out while the posts before it held the slots: taken over.
            if not await asyncio.to_thread(still_ours, due):
                return False
            body = due.payload.encode()
            started = time.perf_counter()
            # Signed when sent: a receiver's five-minute check holds however long the ones
            # before it took.
            answer = await sender.post(
                due.org_id, endpoint.url, body,
                signed_headers(endpoint.secret, int(real_now()), due.event_id, body),
            )
            elapsed = (time.perf_counter() - started) * 1000
            outcome = Outcome(now, elapsed, answer.status_code, answer.error)
            await asyncio.to_thread(record, (due.event_id, outcome))
            return True

    try:
        # In due order, as the dispatcher's lane of an organization starts them; a receiver
        # that hangs holds the advance one time-out, not one per delivery.
        return sum(await in_due_order(claimed, attempt))
    finally:
        await sender.close()
