"""Order use cases: place (with quotes' checks), read, cancel, resolve pending actions, and the
moves the fulfillment worker makes.

Every order is answered as accepted, `in_progress` (spec 1: a POST returns a row in progress),
in both modes, so an integration built against the sandbox runs unchanged against live. The
fulfillment worker then moves it: a sandbox order through every provisioning step at once, as
soon as it sees it, never charged; a live order one step at a time, charged at acceptance in
the same atomic save as the order (402 `insufficient_funds` when the wallet cannot cover the
price, nothing recorded). Failure and cancellation before completion refund what was charged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, cast

from eventsourcing.domain import Aggregate

from adapters import registrar
from adapters.mailboxes import profile_picture_problem
from domain.domains import NAMESERVERS_NOT_POINTED
from domain.errors import DomainError, NotFound, invalid
from domain.orders import (
    ACTIVE_STATES,
    BOUGHT_SOURCES,
    COMPLETED,
    IN_PROGRESS,
    ORDER,
    DomainItem,
    Order,
    never_registered,
)
from domain.pending_actions import PendingAction
from infra.idempotency import created_before
from infra.ids import parse_id, public_id
from schema.vocabulary import Environment
from services.accounts.keys import Principal
from services.accounts.wallet import load_wallet
from services.domains.claims import DomainsHeld, claim_domains, with_picks_retried
from services.orders import steps
from services.orders.commands import PlaceOrder, ResolvePendingAction
from services.orders.current_terms import with_current_terms
from services.orders.plan import Plan, plan_order
from services.pool.leaving import leave_pool, refuse_cancel_while_linked
from services.swaps.endings import detach_warm_domains_of_cancelled, fail_swaps_of_cancelled
from views.orders import (
    OrderOut,
    PriceLine,
    QuoteOut,
    ResolvedActionOut,
    order_view,
    resolved_action_view,
)

if TYPE_CHECKING:
    from runtime.container import Container



def quote(container: Container, principal: Principal, command: PlaceOrder) -> QuoteOut:
    plan = plan_order(container, principal.org_id, principal.environment, command, placing=False)
    total = plan.price["total_cents"]
    result = QuoteOut(
        currency=plan.price["currency"],
        total_cents=total,
        lines=[PriceLine(**line) for line in plan.price["lines"]],
        # The name the order carries its price under, so the two compare directly.
        price_cents=total,
        environment=cast(Environment, principal.environment),
        billed=principal.environment == "live",
        domains_to_register=sum(1 for d in plan.domains if d["source"] in BOUGHT_SOURCES),
        domains_from_inventory=sum(1 for d in plan.domains if d["source"] not in BOUGHT_SOURCES),
    )
    if principal.environment == "live":
        balance = load_wallet(container, principal.org_id, "live").balance_cents
        result.wallet_balance_cents = balance
        result.covered_by_wallet = balance >= total
    return result


def placed_before(container: Container) -> OrderOut | None:
    """The order an earlier attempt of this idempotent request saved before its process died."""
    found = created_before(container, "order", Order)
    return None if found is None else order_view(found)


def place_order(container: Container, principal: Principal, command: PlaceOrder) -> OrderOut:
    if (placed := placed_before(container)) is not None:
        return placed  # saved by the dead attempt: its names are its own, not a conflict

    def attempt(taken_meanwhile: set[str], pick_inventory: bool) -> OrderOut:
        plan = plan_order(
            container, principal.org_id, principal.environment, command,
            exclude=taken_meanwhile, pick_inventory=pick_inventory,
        )
        return _accept_plan(container, principal, command, plan)

    try:
        return with_picks_retried(attempt, lambda held: _refuse_named(command, held.names))
    except DomainsHeld as held:
        raise _in_active_order(held.names[0], "domains") from None


def _in_active_order(name: str, field: str) -> DomainError:
    return DomainError(  # the placement lock's holder: an order or a swap bringing the name in
        "domain_already_in_active_order",
        f"{name} is held by an order or a swap that is still in progress.",
        field=field,
    )


def _refuse_named(command: PlaceOrder, held: list[str]) -> None:
    for index, entry in enumerate(command.domains or []):
        name = registrar.normalize(entry.domain)
        if name in held:
            raise _in_active_order(name, f"domains[{index}].domain")


def _accept_plan(
    container: Container, principal: Principal, command: PlaceOrder, plan: Plan
) -> OrderOut:
    return accept(
        container,
        principal,
        lambda at, charged: Order(
            org_id=principal.org_id,
            environment=principal.environment,
            kind=ORDER,
            destination=plan.destination,
            customer_id=plan.customer_id,
            bundle_id=plan.bundle_id,
            shape=plan.shape,
            domains=plan.domains,
            personas=plan.personas,
            profile_picture_url=command.profile_picture_url,
            forwarding_url=command.forwarding_url,
            price=plan.price,
            charged_cents=charged,
            created_at=at,
        ),
        plan.price["total_cents"],
    )


def accept(
    container: Container,
    principal: Principal,
    build: Callable[[float, int], Order],
    price_cents: int,
) -> OrderOut:
    """Record the accepted order, `in_progress`: live charges the wallet in the same save (the
    worker runs the steps of both). `build(at, charged_cents)` makes the Order. The order takes the placement
    lock of every domain it did not just make up (DomainsHeld when another order in progress
    holds one)."""

    def run() -> OrderOut:
        if (placed := placed_before(container)) is not None:
            return placed  # a concurrent retry of the same request saved it first
        at = container.clock.now()
        live = principal.environment == "live"
        order = build(at, price_cents if live else 0)  # its id: domain.creation_ids
        owned = [item["domain"] for item in order.domains if item["source"] != "generated"]
        aggregates: list[Aggregate] = [order, *claim_domains(container, order, owned, at)]
        if live:
            wallet = load_wallet(container, principal.org_id, "live")
            description = f"{order.kind.capitalize()} {public_id('ord', order.id)}"
            wallet.charge(price_cents, public_id("ord", order.id), description, at)
            aggregates.append(wallet)
        container.unit_of_work.save(*aggregates)
        return order_view(order)

    return container.unit_of_work.retrying(run)


def apply_outcome(
    container: Container, order: Order, outcome: steps.Outcome, at: float
) -> list[Aggregate]:
    """Move the order after its remaining steps ran: complete, fail, or wait for the partner.
    Returns the other aggregates to save with it."""
    if outcome.action is not None:
        action = PendingAction(
            org_id=order.org_id,
            environment=order.environment,
            order_id=public_id("ord", order.id),
            kind=outcome.action["kind"],
            field=outcome.action["field"],
            message=outcome.action["message"],
            details=outcome.action["details"],
            created_at=at,
        )
        order.require_action(public_id("act", action.id), outcome.action["message"], at)
        return [action]
    if outcome.failure is not None:
        return fail(container, order, outcome.failure, at, outcome.failed_domains)
    order.complete(outcome.domains, at)
    return []


def fail(
    container: Container, order: Order, reason: str, at: float, failed_domains: Sequence[str] = ()
) -> list[Aggregate]:
    refund = order.refundable_cents
    order.fail(reason, refund, at, failed_domains)
    return [*close_pending_action(container, order, at),
            *_refund(container, order, refund, "failed", at)]


def close_pending_action(container: Container, order: Order, at: float) -> list[Aggregate]:
    """An order that will not go on (cancelled or failed) leaves nothing half-open: the pending
    action it waited on closes as `cancelled`. Returns it, to save with the order."""
    if order.pending_action_id is None:
        return []
    action = container.store.find(parse_id("act", order.pending_action_id), PendingAction)
    if not isinstance(action, PendingAction):
        return []
    action.cancel(at)
    return [action]


def _refund(container: Container, order: Order, cents: int, why: str, at: float) -> list[Aggregate]:
    if cents <= 0:
        return []
    wallet = load_wallet(container, order.org_id, order.environment)
    order_id = public_id("ord", order.id)
    wallet.refund(cents, order_id, f"Refund: order {order_id} {why}", at)
    return [wallet]


def load_order(container: Container, principal: Principal, order_id: str) -> Order:
    """This tenant's order, or 404 (another organization's or environment's too)."""
    found = container.store.find(parse_id("ord", order_id), Order)
    if not isinstance(found, Order) or found.tenant != principal.tenant:
        raise NotFound("order")
    return found


def get_order(container: Container, principal: Principal, order_id: str) -> OrderOut:
    (view,) = with_current_terms(container, [order_view(load_order(container, principal, order_id))])
    return view


def cancel_order(container: Container, principal: Principal, order_id: str) -> OrderOut:
    def run() -> OrderOut:
        order = load_order(container, principal, order_id)
        at = container.clock.now()
        refuse_cancel_while_linked(
            container, order.org_id, order.environment, public_id("ord", order.id),
            [item["domain"] for item in order.domains],
        )
        order.schedule_cancel(at + container.settings.cancel_grace_seconds, at)
        closed = [*close_pending_action(container, order, at),
                  *fail_swaps_of_cancelled(container, order, at)]
        container.unit_of_work.save(order, *closed, *_leave_pool(container, order, at))
        return order_view(order)

    return container.unit_of_work.retrying(run)


def _leave_pool(container: Container, order: Order, at: float) -> list[Aggregate]:
    """A cancelled order's domains no longer lend it inboxes (spec 4.2: a pooled domain needs
    them), so the ones the pool holds idle leave it, as a swapped-out domain does. One that an
    attach already linked stays with its workspace until released."""
    order_id = public_id("ord", order.id)
    return [
        pool
        for item in order.domains
        for pool in leave_pool(
            container, order.org_id, order.environment, item["domain"], at, of_order=order_id
        )
    ]


def finalize_cancel(container: Container, order: Order, at: float) -> list[Aggregate]:
    """The grace window is over: release the domains and refund an unfinished order. A domain
    the order had not registered yet leaves it (it was never the organization's) and its price
    is part of the refund; the ones it registered stay, free for a new order.

    The pool is swept again here because a `POST /pool/add` checks the order without saving it:
    one whose check ran just before the cancel was accepted saves its pool record just after
    the cancel's own sweep, and that record must not outlive the order's inboxes."""
    refund = order.cancel_refund_cents
    left_pool = _leave_pool(container, order, at)
    warm, swaps = detach_warm_domains_of_cancelled(container, order, at)
    kept = kept_by_other_orders(container, order)
    # An imported domain whose nameservers still do not point at us waits on the customer as
    # before the order (GET /domains says so): it is released, not `available`.
    unpointed = set(steps.awaiting_nameservers(order.domains, at))
    released: list[DomainItem] = [
        {**item, "status": "action_required" if item["domain"] in unpointed else "available",
         "inboxes": []}
        if item["domain"] not in kept
        else {**item, "status": kept[item["domain"]], "inboxes": [], "kept_by_another": True}
        for item in [*order.domains, *warm]
        if not never_registered(item)
    ]
    order.finalize_cancel(released, refund, at)
    return [*left_pool, *swaps, *_refund(container, order, refund, "cancelled", at)]


def kept_by_other_orders(container: Container, order: Order) -> dict[str, str]:
    """The order's names another active order of its tenant still uses (spec 2.5: one name
    may serve a suite_a and a suite_b order), with the status they keep there: not released."""
    names = [item["domain"] for item in [*order.domains, *order.warm_domains]]
    if not names:
        return {}
    marks = ", ".join("?" for _ in names)
    with container.read_db.read() as cur:
        rows = cur.execute(
            "SELECT u.name, o.status FROM domain_usage u JOIN orders o ON o.id = u.holder "
            f"WHERE u.name IN ({marks}) AND u.holder <> ? AND o.tenant = ?",
            (*names, public_id("ord", order.id), order.tenant),
        ).fetchall()
    return {
        row["name"]: "active" if row["status"] == COMPLETED else IN_PROGRESS
        for row in rows
        if row["status"] in ACTIVE_STATES
    }


def load_action(container: Container, principal: Principal, action_id: str) -> PendingAction:
    found = container.store.find(parse_id("act", action_id), PendingAction)
    if not isinstance(found, PendingAction) or found.tenant != principal.tenant:
        raise NotFound("pending action")
    return found


def resolve_action(
    container: Container, principal: Principal, action_id: str, command: ResolvePendingAction
) -> ResolvedActionOut:
    """Unblock an order: a new public `profile_picture_url`, or (kind `nameservers`, empty
    body) the partner's word that the nameservers are set, which the DNS must confirm."""
    url = command.profile_picture_url
    if url is not None and (problem := profile_picture_problem(url)) is not None:
        raise invalid(problem, "profile_picture_url")

    def run() -> ResolvedActionOut:
        action = load_action(container, principal, action_id)
        order = load_order(container, principal, action.order_id)
        at = container.clock.now()
        if action.kind == steps.NAMESERVERS:
            if url is not None:  # the DNS answers this one: a URL is not what it waits for
                raise invalid(
                    "A nameservers action takes no profile_picture_url: send `{}` once the "
                    "nameservers are set.",
                    "profile_picture_url",
                )
            action.resolve({"nameservers_pointed": _pointed(order, action, at)}, at)
            order.resume(order.profile_picture_url, at)
        else:
            if url is None:
                raise invalid(
                    "Send the profile_picture_url that replaces the rejected one.",
                    "profile_picture_url",
                )
            action.resolve({"profile_picture_url": url}, at)
            order.resume(url, at)
        # `in_progress` again: the worker goes on from here (a sandbox order at once).
        container.unit_of_work.save(action, order)
        return resolved_action_view(action, order)

    return container.unit_of_work.retrying(run)


def _pointed(order: Order, action: PendingAction, at: float) -> list[str]:
    """The domains of a nameservers action, once the DNS sees every one of them pointed."""
    if action.status != "pending":
        return []  # resolve() refuses it with order_state_conflict
    waiting = steps.awaiting_nameservers(order.domains, at)
    if waiting:
        raise DomainError(
            "domains_not_submittable",
            f"The nameservers of {', '.join(waiting)} are not pointed at us yet.",
            field="domains",
            details={
                "domains": [{"domain": n, "reason": NAMESERVERS_NOT_POINTED} for n in waiting],
                "reason": NAMESERVERS_NOT_POINTED,
                "nameserver_groups": action.details.get("nameserver_groups", []),
            },
        )
    return list(action.details.get("domains", []))
