"""Taking the placement lock of an order's domains (see `domain.domain_claims`).

Called inside the load-decide-save of an order's acceptance: the claims are saved with the
order, so a concurrent order for the same name either loses the version race (and re-runs,
finding the claim held) or runs after and finds it held. A claim is free when nobody took it,
or when its holder order is no longer being set up or torn down (completed, failed, cancelled):
that is the same rule the read-model check of `services.order_plan` applies.
"""

from __future__ import annotations

from typing import Any

from eventsourcing.domain import Aggregate

from domain.domain_claims import DomainClaim, claim_id
from domain.orders import BUSY_STATES, Order
from infra.ids import parse_id, public_id


class DomainsHeld(Exception):
    """Some of the names are held by another order still in progress."""

    def __init__(self, names: list[str]) -> None:
        super().__init__(", ".join(names))
        self.names = names


def _holder_busy(container: Any, order_id: str) -> bool:
    holder = container.store.find(parse_id("ord", order_id), Order)
    return isinstance(holder, Order) and holder.status in BUSY_STATES


def claim_domains(container: Any, order: Order, names: list[str], at: float) -> list[Aggregate]:
    """The claims of these names taken for the order (unsaved), or DomainsHeld."""
    order_id = public_id("ord", order.id)
    claims: list[Aggregate] = []
    held: list[str] = []
    for name in names:
        found = container.store.find(
            claim_id(order.org_id, order.environment, name), DomainClaim
        )
        claim = found or DomainClaim(
            org_id=order.org_id, environment=order.environment, name=name, at=at
        )
        if claim.order_id not in (None, order_id) and _holder_busy(container, claim.order_id):
            held.append(name)
            continue
        claim.take(order_id, at)
        claims.append(claim)
    if held:
        raise DomainsHeld(held)
    return claims
