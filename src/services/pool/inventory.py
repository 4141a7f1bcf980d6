"""Pool inventory: `POST /pool/add` and `POST /pool/remove` (spec 4.1, 4.2).

Add is all-or-nothing: when any listed domain is not eligible (spec 4.2)
the request fails with 409 `domains_not_submittable`, `details.domains` listing each refused
name with its `reason`, and nothing is added. A domain already in the pool is left as it is
(outcome `already_pooled`), so repeating an add is safe. A new pool domain is `warming` until
`available_at`: at once in sandbox, after the simulated world's warm-up (10 fulfillment steps)
on live keys.

Remove, exactly per spec 4.1: `available`, `warming` and `idle_quarantined` domains are removed
(outcome `removed`); when any listed domain is `assigned`, `reserved` or `releasing`, the
whole request fails with 409 `pool_domains_linked` (`details.domains`: each linked name with
its `condition`) and nothing is removed; unknown or already removed names are `absent`, so
repeating a remove is safe. Removing never touches orders, inboxes, subscriptions or billing,
and a removed paid domain can be added again. `inbox_count` is the number of active `suite_a`
inboxes on the removed domains.
"""

# This docstring is the OpenAPI description of both routes (`gateway/rest/pool.py`); their
# commands are `services/pool/commands.py` `AddPoolDomains` / `RemovePoolDomains`, their answers
# `views/pool.py` `PoolAddResult` / `PoolRemoveResult`.

from __future__ import annotations

from typing import TYPE_CHECKING

from adapters import registrar
from domain.errors import DomainError, invalid
from domain.orders import Order
from domain.pool_domains import LINKED, REMOVABLE, PoolDomain
from infra.ids import parse_id
from services.accounts.keys import Principal
from services.pool.commands import MAX_DOMAINS, AddPoolDomains, RemovePoolDomains
from services.pool.eligibility import check_eligibility, unbacked_reason
from services.pool.records import find_pool_domain, pool_domain_for, still_backed
from views.pool import (
    PoolAddOutcome,
    PoolAddResult,
    PoolRemoveOutcome,
    PoolRemoveResult,
    pool_add_outcome,
)

if TYPE_CHECKING:
    from runtime.container import Container

# Warm-up of a new live pool domain, and quarantine after a release, in simulated provisioning
# steps: the simulated world runs on PARTNER_API_FULFILLMENT_STEP_SECONDS, so a live pool flow
# can be followed end to end in seconds, as a live order can.
POOL_REST_STEPS = 10


def live_rest_seconds(container: Container) -> float:
    return POOL_REST_STEPS * float(container.settings.fulfillment_step_seconds)


def pool_names(sent: list[str]) -> list[str]:
    """1..25 unique names, normalized; each problem as `invalid_request` on its field."""
    if not 1 <= len(sent) <= MAX_DOMAINS:
        raise invalid(f"Send 1 to {MAX_DOMAINS} domains.", "domains")
    names: list[str] = []
    for index, value in enumerate(sent):
        name = registrar.normalize(value)
        if not name:
            raise invalid("A domain must not be empty.", f"domains[{index}]")
        if not registrar.is_valid_name(name):
            raise invalid(f"'{value}' is not a valid domain name.", f"domains[{index}]")
        if name in names:
            # Uniqueness is a rule of the list (spec 4.1), so the list is the field at fault.
            raise DomainError(
                "invalid_request",
                f"{name} is listed twice (items {names.index(name)} and {index}); items must "
                "be unique.",
                field="domains",
                details={"duplicate": name},
            )
        names.append(name)
    return names


def add_domains(
    container: Container, principal: Principal, command: AddPoolDomains
) -> PoolAddResult:
    names = pool_names(command.domains)
    org_id, environment = principal.org_id, principal.environment
    warmup = live_rest_seconds(container) if environment == "live" else 0

    def run() -> PoolAddResult:
        checks = check_eligibility(container, org_id, environment, names)
        refused = [{"domain": c.name, "reason": c.reason} for c in checks if c.reason]
        if refused:
            raise DomainError(
                "domains_not_submittable",
                "Some domains cannot enter the pool; nothing was added.",
                field="domains",
                details={"domains": refused},
            )
        at = container.clock.now()
        changed: list[PoolDomain] = []
        outcomes: list[PoolAddOutcome] = []
        for check in checks:
            pool = pool_domain_for(container, org_id, environment, check.name)
            added = not pool.pooled
            if added:
                pool.add(
                    dom_id=check.dom_id,
                    order_id=check.order_id,
                    inbox_count=check.inbox_count,
                    available_at=at + warmup,
                    at=at,
                )
                changed.append(pool)
            outcomes.append(pool_add_outcome(pool, at, "added" if added else "already_pooled"))
        container.unit_of_work.save(*changed)
        _undo_if_unbacked(container, changed)
        count = sum(1 for o in outcomes if o.outcome == "added")
        return PoolAddResult(
            added=count, already_pooled=len(outcomes) - count, domains=outcomes
        )

    return container.unit_of_work.retrying(run)


def _undo_if_unbacked(container: Container, added: list[PoolDomain]) -> None:
    """The eligibility check read each order without saving it, so a cancellation could have
    been accepted since, its pool sweep missing these new records. Read the orders again, now
    that the records are stored: a domain whose order no longer backs it leaves at once (the
    end of the cancel's grace window sweeps again, for a cancel saved after this read) and the
    add is refused as if the check had seen it: all or nothing, so the others leave too."""
    unbacked: list[dict[str, str]] = []
    for pool in added:
        found = container.store.find(parse_id("ord", pool.order_id or ""), Order)
        order = found if isinstance(found, Order) else None
        if not still_backed(order, pool):
            unbacked.append({"domain": pool.name, "reason": unbacked_reason(order)})
    if not unbacked:
        return
    at = container.clock.now()
    undone = [pool for pool in added if pool.condition_at(at) in REMOVABLE]
    for pool in undone:
        pool.remove(at)
    container.unit_of_work.save(*undone)
    raise DomainError(
        "domains_not_submittable",
        "Some domains cannot enter the pool; nothing was added.",
        field="domains",
        details={"domains": unbacked},
    )


def remove_domains(
    container: Container, principal: Principal, command: RemovePoolDomains
) -> PoolRemoveResult:
    names = pool_names(command.domains)
    org_id, environment = principal.org_id, principal.environment

    def run() -> PoolRemoveResult:
        at = container.clock.now()
        found = {name: find_pool_domain(container, org_id, environment, name) for name in names}
        pooled = {name: pool for name, pool in found.items() if pool and pool.pooled}
        linked = [
            {"domain": name, "condition": pool.condition_at(at)}
            for name, pool in pooled.items()
            if pool.condition_at(at) in LINKED
        ]
        if linked:
            raise DomainError(
                "pool_domains_linked",
                "Some domains are linked to a workspace or an operation in progress; "
                "nothing was removed.",
                field="domains",
                details={"domains": linked},
            )
        for pool in pooled.values():
            pool.remove(at)
        container.unit_of_work.save(*pooled.values())
        return PoolRemoveResult(
            removed=len(pooled),
            absent=len(names) - len(pooled),
            inbox_count=sum(pool.inbox_count for pool in pooled.values()),
            domains=[
                PoolRemoveOutcome(domain=name, outcome="removed" if name in pooled else "absent")
                for name in names
            ],
        )

    return container.unit_of_work.retrying(run)
