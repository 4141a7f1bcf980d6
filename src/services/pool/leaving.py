"""What a swap (or a lapse) does to the pool record of the domain it takes off an order.

A pooled domain lends its order's inboxes to the workspaces the pool attaches it to, so it can
only stay pooled while it is on its order. Swapping it out therefore:

- is refused at acceptance with 409 `pool_domains_linked` (`details.domains`:
  `[{domain, condition}]`, as on `POST /pool/remove`) while the pool has it `reserved`,
  `assigned` or `releasing`: release it first;
- otherwise takes it out of the pool (`removed`, webhook `pool.domain_removed`) in the same
  save that takes it off the order, at the swap's completion. When an attach linked it in the
  meantime, the swap fails instead and the attach keeps the domain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from domain.errors import DomainError
from domain.pool_domains import LINKED, REMOVABLE, PoolDomain
from services.pool.records import find_pool_domain

if TYPE_CHECKING:
    from runtime.container import Container


def _pooled(container: Container, org_id: str, environment: str, name: str) -> PoolDomain | None:
    found = find_pool_domain(container, org_id, environment, name)
    return found if found is not None and found.pooled else None


def linked_condition(
    container: Container, org_id: str, environment: str, name: str, of_order: str | None = None
) -> str | None:
    """The pool condition linking this domain to a workspace or a pool move, if any (given
    `of_order`, only when it was pooled from that order)."""
    pool = _pooled(container, org_id, environment, name)
    if pool is None or (of_order is not None and pool.order_id != of_order):
        return None
    condition = pool.condition_at(container.clock.now())
    return condition if condition in LINKED else None


def refuse_if_linked(
    container: Container, org_id: str, environment: str, name: str, field: str = "domain"
) -> None:
    """409 while the pool lends this domain to a workspace: neither swapped off its order nor
    (as `new_domain`) onto another, whose own swap could then never take it off."""
    condition = linked_condition(container, org_id, environment, name)
    if condition is not None:
        raise DomainError(
            "pool_domains_linked",
            f"{name} is {condition} in the pool; release it from the pool before swapping it.",
            field=field,
            details={"domains": [{"domain": name, "condition": condition}]},
        )


def refuse_cancel_while_linked(
    container: Container, org_id: str, environment: str, order_id: str, names: list[str]
) -> None:
    """An order whose domain an attach linked lends that workspace its inboxes: cancelling it
    would free the name for another order while the pool still hands it out. 409
    `pool_domains_linked` until the partner releases it, as a swap is refused."""
    linked = [
        {"domain": name, "condition": condition}
        for name in dict.fromkeys(names)
        if (condition := linked_condition(container, org_id, environment, name, order_id))
        is not None
    ]
    if linked:
        listed = ", ".join(item["domain"] for item in linked)
        raise DomainError(
            "pool_domains_linked",
            f"{listed}: linked to a workspace by the pool; release from the pool before "
            "cancelling the order.",
            details={"domains": linked},
        )


def leave_pool(
    container: Container,
    org_id: str,
    environment: str,
    name: str,
    at: float,
    of_order: str | None = None,
) -> list[PoolDomain]:
    """The pool record, removed (unsaved), when the domain was pooled and not linked (and,
    given `of_order`, pooled from that order: a cancelled order's domains leave the pool too)."""
    pool = _pooled(container, org_id, environment, name)
    if pool is None or pool.condition_at(at) not in REMOVABLE:
        return []
    if of_order is not None and pool.order_id != of_order:
        return []
    pool.remove(at)
    return [pool]


def lapse_from_pool(
    container: Container, org_id: str, environment: str, name: str, at: float
) -> list[PoolDomain]:
    """The pool record of a domain that lapsed, out of the pool (unsaved) whatever its
    condition: the organization no longer owns the name, so no workspace may keep it."""
    pool = _pooled(container, org_id, environment, name)
    if pool is None:
        return []
    pool.lapse(at)
    return [pool]
