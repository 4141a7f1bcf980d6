"""Loading and saving pool aggregates: shared by add/remove, attach/release and replacements."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from domain.orders import CANCEL_SCHEDULED, CANCELLED, FAILED, Order
from domain.pool_domains import AVAILABLE, PoolDomain, pool_domain_id
from domain.swaps import Swap
from infra.ids import parse_id

if TYPE_CHECKING:
    from runtime.container import Container


def find_pool_domain(container: Container, org_id: str, environment: str, name: str) -> PoolDomain | None:
    found = container.store.find(pool_domain_id(org_id, environment, name), PoolDomain)
    return found if isinstance(found, PoolDomain) else None


def pool_domain_for(container: Container, org_id: str, environment: str, name: str) -> PoolDomain:
    """The pool record of this name, tracked (unsaved) on first use."""
    found = find_pool_domain(container, org_id, environment, name)
    if found is not None:
        return found
    return PoolDomain(org_id=org_id, environment=environment, name=name, at=container.clock.now())


def take_available(
    container: Container, tenant: str, quantity: int, excluded: set[str] | None = None
) -> list[PoolDomain]:
    """Up to `quantity` pool domains that are available now, checked on the aggregates.

    Candidates come from the read model (which may lag), in random order so concurrent
    attaches rarely pick the same ones; each is loaded and re-checked, and the caller's save
    is what settles a race (the loser's version check fails and it retries). A domain whose
    order failed, is being cancelled, or no longer holds it has lost its inboxes: skipped.
    """
    now = container.clock.now()
    with container.read_db.read() as cur:
        rows = cur.execute(
            "SELECT name FROM pool_domains WHERE tenant = ? AND burned = ? AND (condition = ? "
            "OR (condition IN ('warming', 'idle_quarantined') AND available_at <= ?))",
            (tenant, False, AVAILABLE, now),
        ).fetchall()
    names = [row["name"] for row in rows if row["name"] not in (excluded or set())]
    random.shuffle(names)
    org_id, environment = tenant.split(":", 1)
    chosen: list[PoolDomain] = []
    orders: dict[str, Order | None] = {}
    for name in names:
        domain = find_pool_domain(container, org_id, environment, name)
        if domain is None or domain.condition_at(now) != AVAILABLE or domain.burned:
            continue
        order_id = domain.order_id or ""
        if order_id not in orders:
            orders[order_id] = container.store.find(parse_id("ord", order_id), Order)
        order = orders[order_id]
        if not isinstance(order, Order) or not still_backed(order, domain):
            continue
        if not swap_under_way(container, order, domain.name):
            chosen.append(domain)
            if len(chosen) == quantity:
                break
    return chosen


def swap_under_way(container: Container, order: Order, name: str) -> bool:
    """Whether a swap accepted for this domain of the order is still open: it takes the
    domain off the order (or renames its inboxes) when it completes, so the pool may not
    lend it meanwhile."""
    swap_id = order.swap_claimed_by(name)
    if swap_id is None:
        return False
    swap = container.store.find(parse_id("swp", swap_id), Swap)
    return isinstance(swap, Swap) and swap.is_open


def still_backed(order: Order | None, domain: PoolDomain) -> bool:
    """The domain is still on its order, and the order is not failed or being cancelled."""
    return (
        isinstance(order, Order)
        and order.status not in (CANCEL_SCHEDULED, CANCELLED, FAILED)
        and any(item["domain"] == domain.name for item in order.domains)
    )
