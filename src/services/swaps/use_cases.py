"""Swap use cases: accept `POST /swaps` and `POST /swaps/user_names`, read one, and the moves
the swap worker makes (one live step, a re-check of a swap waiting on the partner, the end of
a premium swap's warm period).

Swaps are asynchronous for every key (spec 1: a POST returns a row in progress): acceptance
records `created`, and the swap worker picks the swap up (`in_progress`). A sandbox swap then
runs every step in that same save, as soon as the worker sees it. Live swaps are charged at
acceptance for a domain they buy (same save; 402 `insufficient_funds` when the wallet cannot
cover it, nothing recorded), then moved one step per `PARTNER_API_FULFILLMENT_STEP_SECONDS`. A
failure refunds the charge. At completion the order's domain is replaced in one save with the
swap's last event.

Acceptance also marks the domain on the order (`Order.DomainSwapClaimed`) in the same save, so
of two concurrent swaps of one domain the second loses the order's version race, re-runs, and
is refused at once (409 `conflict`) while the first is open.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING

from eventsourcing.domain import Aggregate

from adapters import dns
from domain.domains import Domain
from domain.errors import DomainError, NotFound
from domain.orders import COMPLETED, DomainItem, Order
from domain.swaps import (
    ACTION_REQUIRED,
    CREATED,
    IN_PROGRESS,
    PREMIUM,
    PREMIUM_WARM_DAYS,
    USER_NAMES,
    Swap,
)
from infra.idempotency import created_before
from infra.ids import parse_id, public_id
from services.accounts.keys import Principal
from services.accounts.wallet import load_wallet
from services.domains.claims import DomainsHeld, claim_names, with_picks_retried
from services.pool import leaving as swap_pool
from services.swaps import steps as swap_steps
from services.swaps.commands import CreateSwap, RenameSwapUserNames
from services.swaps.endings import fail_swap, find_swap
from services.swaps.plan import SwapPlan, plan_rename, plan_swap
from views.swaps import SwapOut, swap_view

if TYPE_CHECKING:
    from runtime.container import Container

WARM_SECONDS = PREMIUM_WARM_DAYS * 86_400


def create_swap(container: Container, principal: Principal, command: CreateSwap) -> SwapOut:
    return with_picks_retried(
        lambda taken, pick: _create_swap_once(container, principal, command, taken, pick)
    )


def _create_swap_once(
    container: Container, principal: Principal, command: CreateSwap,
    exclude: set[str], pick_inventory: bool,
) -> SwapOut:
    return container.unit_of_work.retrying(lambda: _earlier_or(container, lambda: _accept(
        container, principal, plan_swap(container, principal, command, exclude, pick_inventory),
        command.type,
    )))


def rename_user_names(
    container: Container, principal: Principal, command: RenameSwapUserNames
) -> SwapOut:
    return container.unit_of_work.retrying(lambda: _earlier_or(container, lambda: _accept(
        container, principal, plan_rename(container, principal, command), USER_NAMES
    )))


def _earlier_or(container: Container, accept: Callable[[], SwapOut]) -> SwapOut:
    """The swap an earlier attempt of this idempotent request saved (its process died, or it
    is the rival that won the save), else a new one."""
    if (earlier := created_before(container, "swap", Swap)) is not None:
        return swap_view(earlier)
    return accept()


def _accept(container: Container, principal: Principal, plan: SwapPlan, kind: str) -> SwapOut:
    at = container.clock.now()
    live = principal.environment == "live"
    renaming = kind == USER_NAMES
    price = 0 if renaming else int(plan.new_item["price_cents"])
    item: DomainItem = (
        copy.copy(plan.new_item) if renaming else {**plan.new_item, "status": "in_progress"}
    )
    order_id = public_id("ord", plan.order.id)
    swap = Swap(
        org_id=principal.org_id,
        environment=principal.environment,
        kind=kind,
        order_id=order_id,
        domain=plan.old_item["domain"],
        item=item,
        personas=plan.personas,
        price_cents=price,
        charged_cents=price if live else 0,
        created_at=at,
    )
    # A rename too: the pool lends the linked domain's inboxes, identities and all, to another
    # workspace, whose reservation would not know its mailboxes were renamed.
    swap_pool.refuse_if_linked(container, principal.org_id, principal.environment, swap.domain)
    _claim_domain(container, plan.order, swap, at)
    claimed = _claim_new_domain(container, swap, item, at, plan.chosen_by_service)
    aggregates: list[Aggregate] = [swap, *claimed]
    if live and price:
        wallet = load_wallet(container, principal.org_id, "live")
        swap_id = public_id("swp", swap.id)
        wallet.charge(price, order_id, f"Swap {swap_id}: register {item['domain']}", at)
        aggregates.append(wallet)
    if not any(aggregate is plan.order for aggregate in aggregates):
        aggregates.append(plan.order)
    container.unit_of_work.save(*aggregates)
    return swap_view(swap)


def _claim_domain(container: Container, order: Order, swap: Swap, at: float) -> None:
    """Mark the swapped domain on the order, unless another swap of it is still open."""
    held_by = order.swap_claimed_by(swap.domain)
    if held_by is not None:
        other = container.store.find(parse_id("swp", held_by), Swap)
        if isinstance(other, Swap) and other.is_open:
            raise DomainError(
                "conflict", f"A swap of {swap.domain} is already under way.", field="domain"
            )
    order.claim_for_swap(swap.domain, public_id("swp", swap.id), at)


def _claim_new_domain(
    container: Container, swap: Swap, item: DomainItem, at: float, chosen: bool
) -> list[Aggregate]:
    """The placement lock of the name the swap brings in (an owned or a bought one), held by
    the swap until it ends: without it, two swaps, or a swap and an order, could take one name
    (and pay for it twice). A generated name is new to everyone."""
    if swap.kind == USER_NAMES or item["source"] == "generated":
        return []
    name = str(item["domain"])
    bought = {name} if item["source"] == "purchase" else set()
    try:
        return claim_names(container, public_id("swp", swap.id), swap.org_id, swap.environment,
                           [name], bought, at, picked={name} if chosen else ())
    except DomainsHeld as held:
        if chosen:
            raise  # the service's own pick: `create_swap` picks again
        if held.registered:
            raise DomainError(
                "domains_not_submittable",
                f"{name} is being registered by someone else; name another domain.",
                field="new_domain",
                details={"domains": [{"domain": name, "reason": "registered"}]},
            ) from None
        raise DomainError(
            "domain_already_in_active_order",
            f"{name} is already taken by an order or swap in progress.",
            field="new_domain",
        ) from None


def _imported_domain(container: Container, swap: Swap) -> Domain | None:
    if swap.kind == USER_NAMES or swap.item["source"] != "inventory":
        return None
    found = container.store.find(parse_id("dom", swap.item["id"]), Domain)
    return found if isinstance(found, Domain) else None


def _pointed(container: Container, swap: Swap) -> bool:
    """Whether the new domain's nameservers point at us (only imported inventory may not)."""
    domain = _imported_domain(container, swap)
    if domain is None or domain.status != "action_required":
        return True
    return dns.nameservers_pointed(domain.name, domain.created_at, container.clock.now())


def _waiting_domain(container: Container, swap: Swap, at: float) -> list[Aggregate]:
    """The imported Domain leaves `action_required` once its nameservers are pointed."""
    domain = _imported_domain(container, swap)
    if domain is None or domain.status != "action_required" or not _pointed(container, swap):
        return []
    domain.nameservers_pointed(at)
    return [domain]


def _finish(
    container: Container,
    swap: Swap,
    outcome: swap_steps.Outcome,
    at: float,
    order: Order | None = None,
) -> list[Aggregate]:
    if outcome.action is not None:
        swap.require_action(outcome.action, at)
        return []
    if outcome.failure is not None:
        return fail_swap(container, swap, outcome.failure, at)
    return _complete(container, swap, outcome.item, at, order)


def _complete(
    container: Container, swap: Swap, item: DomainItem, at: float, order: Order | None = None
) -> list[Aggregate]:
    """`order` is the one already loaded (and changed) in this save, if any."""
    if order is None:
        order = container.store.find(parse_id("ord", swap.order_id), Order)
    if (
        not isinstance(order, Order)
        or order.status != COMPLETED
        or swap.domain not in {d["domain"] for d in _still_held(order, swap)}
    ):
        return fail_swap(container, swap, f"{swap.domain} is no longer live on {swap.order_id}.", at)
    if swap.kind == USER_NAMES:
        order.rename_inboxes(swap.domain, item["inboxes"], at)
        swap.complete(item, None, at)
        return [order]
    linked = swap_pool.linked_condition(container, swap.org_id, swap.environment, swap.domain)
    if linked is not None:
        return fail_swap(container, swap, f"{swap.domain} became {linked} in the pool.", at)
    warm_until = at + WARM_SECONDS if swap.kind == PREMIUM else None
    order.swap_domain(swap.domain, item, warm_until, public_id("swp", swap.id), at)
    swap.complete(item, warm_until, at)
    # The domain is off the order now: it cannot lend its inboxes to the pool any more.
    left = swap_pool.leave_pool(container, swap.org_id, swap.environment, swap.domain, at)
    return [order, *left]


def _still_held(order: Order, swap: Swap) -> list[DomainItem]:
    """The items a swap may still change: a rename also reaches the kept-warm domains."""
    return order.held_items if swap.kind == USER_NAMES else order.domains


def load_swap(container: Container, principal: Principal, swap_id: str) -> Swap:
    found = find_swap(container, swap_id)
    if found is None or found.tenant != principal.tenant:
        raise NotFound("swap")
    return found


def get_swap(container: Container, principal: Principal, swap_id: str) -> SwapOut:
    swap = load_swap(container, principal, swap_id)
    # The worker saves without waiting: once a partner sees the swap move, the domain and
    # pool lists (read models) show it too.
    if swap.status != CREATED:
        container.unit_of_work.wait_for_stored()
    return swap_view(swap)


# Moves of the swap worker. Each loads, decides and saves with the aggregates' version checks,
# so a move two workers attempt lands once (the loser re-runs on fresh state and finds it done).


def advance_swap(container: Container, swap_id: str) -> None:
    """One live step: pick the swap up (`in_progress`), run its next step, or complete it. A
    sandbox swap is picked up and run to its end in one move."""

    def run() -> None:
        swap = find_swap(container, swap_id)
        if swap is None or swap.status not in (CREATED, IN_PROGRESS):
            return
        at = container.clock.now()
        others: list[Aggregate] = []
        if swap.environment == "test":
            if swap.status == CREATED:
                swap.start(at)
            pointed = _waiting_domain(container, swap, at)
            outcome = swap_steps.run_all(swap, _pointed(container, swap))
            others = _finish(container, swap, outcome, at)
            # The Domain's own move first, so the order's later one is what the inventory shows.
            container.store.save(*pointed, swap, *others)
            return
        if swap.status == CREATED:
            swap.start(at)
        else:
            step = swap_steps.next_step(swap)
            if step is None:
                others = _complete(container, swap, swap_steps.live_item(swap.item), at)
            else:
                outcome = swap_steps.run_step(step, swap, _pointed(container, swap))
                if outcome.action is None and outcome.failure is None:
                    swap.record_step(step, outcome.item, at)
                else:
                    others = _finish(container, swap, outcome, at)
        container.store.save(swap, *others)

    container.unit_of_work.retrying(run)


def recheck_waiting(container: Container, swap_id: str) -> None:
    """A swap in `action_required` goes on once its new domain's nameservers are pointed."""

    def run() -> None:
        swap = find_swap(container, swap_id)
        if swap is None or swap.status != ACTION_REQUIRED or not _pointed(container, swap):
            return
        at = container.clock.now()
        pointed = _waiting_domain(container, swap, at)
        swap.resume(at)
        others: list[Aggregate] = []
        if swap.environment == "test":
            others = _finish(container, swap, swap_steps.run_all(swap), at)
        # The Domain's own move first, so the order's later one is what the inventory shows.
        container.store.save(*pointed, swap, *others)

    container.unit_of_work.retrying(run)


def detach_warm_domain(container: Container, swap_id: str) -> bool:
    """A premium swap's warm period is over: the old domain leaves the order. Whether this
    call detached it (a sandbox clock's advance counts what it ran)."""

    def run() -> bool:
        swap = find_swap(container, swap_id)
        if swap is None:
            return False
        with container.clock.scoped(swap.org_id, swap.environment):
            return _detach_when_warm_period_over(container, swap)

    return container.unit_of_work.retrying(run)


def _detach_when_warm_period_over(container: Container, swap: Swap) -> bool:
    at = container.clock.now()
    if (
        swap.warm_until is None
        or swap.old_domain_detached_at is not None
        or at < swap.warm_until
    ):
        return False
    swap.detach_old_domain(at)
    order = container.store.find(parse_id("ord", swap.order_id), Order)
    others: list[Aggregate] = []
    if isinstance(order, Order) and any(i["domain"] == swap.domain for i in order.warm_domains):
        order.detach_warm_domain(swap.domain, at)
        others.append(order)
    container.store.save(swap, *others)
    return True
