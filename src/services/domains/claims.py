"""Taking the placement lock of an order's or a swap's domains (see `domain.domain_claims`).

Called inside the load-decide-save of an order's acceptance: the claims are saved with the
order, so a concurrent order for the same name either loses the version race (and re-runs,
finding the claim held) or runs after and finds it held. A claim is free when nobody took it,
or when its holder order is no longer being set up or torn down (completed, failed, cancelled):
that is the same rule the read-model check of `services.orders.plan` applies.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, TypeVar

from eventsourcing.domain import Aggregate

from domain.domain_claims import DomainClaim, claim_id
from domain.orders import ACTIVE_STATES, BUSY_STATES, PURCHASE, Order
from domain.swaps import Swap
from infra.ids import parse_id, public_id

if TYPE_CHECKING:
    from runtime.container import Container

# Tries of a request whose picks of free inventory other requests keep taking; the last one
# picks none (new names).
PLACEMENT_ATTEMPTS = 4
T = TypeVar("T")


class DomainsHeld(Exception):
    """Some of the names are held by another order or swap still in progress."""

    def __init__(self, names: list[str], registered: frozenset[str] = frozenset()) -> None:
        super().__init__(", ".join(names))
        self.names = names
        self.registered = registered  # held by another organization's order


def with_picks_retried(
    run: Callable[[set[str], bool], T], on_held: Callable[[DomainsHeld], None] | None = None
) -> T:
    """`run(taken_meanwhile, pick_inventory)` again while other requests take inventory it
    picked (the service's choice: picked again without them, never refused), the last try
    picking none (new names). `on_held` may refuse first, for a name the partner named."""
    taken: set[str] = set()
    for attempt in range(PLACEMENT_ATTEMPTS):
        try:
            return run(taken, attempt < PLACEMENT_ATTEMPTS - 1)
        except DomainsHeld as held:
            if on_held is not None:
                on_held(held)
            taken.update(held.names)
    raise DomainsHeld(sorted(taken))


# Owner of the cross-organization claim of a name being bought: a purchase checks the read
# models for other organizations' ownership, and two organizations racing both pass it.
REGISTRY = "registry"


def _busy_holder(container: Container, holder_id: str | None) -> Order | Swap | None:
    """The order or swap holding a claim, while it is still being set up or torn down."""
    if not holder_id:
        return None
    if holder_id.startswith("swp_"):
        swap = container.store.find(parse_id("swp", holder_id), Swap)
        return swap if isinstance(swap, Swap) and swap.is_open else None
    holder = container.store.find(parse_id("ord", holder_id), Order)
    return holder if isinstance(holder, Order) and holder.status in BUSY_STATES else None


def _holder_keeps(container: Container, holder_id: str | None, name: str) -> bool:
    """Whether the order that last took the name (or the order of the swap that did) still
    has it. Free inventory is picked from the read models, which show the name on that order a
    moment after it is saved: a pick confirms here that the name is really free."""
    if not holder_id:
        return False
    order_id = holder_id
    if holder_id.startswith("swp_"):
        swap = container.store.find(parse_id("swp", holder_id), Swap)
        if not isinstance(swap, Swap):
            return False
        order_id = swap.order_id
    order = container.store.find(parse_id("ord", order_id), Order)
    return (
        isinstance(order, Order)
        and order.kind != PURCHASE  # a purchase buys names for orders, it holds none
        and order.status in ACTIVE_STATES
        and any(item["domain"] == name for item in order.held_items)
    )


def claim_domains(container: Container, order: Order, names: list[str], at: float) -> list[Aggregate]:
    """The claims of these names taken for the order (unsaved), or DomainsHeld."""
    bought = {item["domain"] for item in order.domains if item["source"] == "purchase"}
    picked = {item["domain"] for item in order.domains if item["source"] == "inventory"}
    return claim_names(
        container, public_id("ord", order.id), order.org_id, order.environment, names, bought, at,
        picked,
    )


def claim_names(
    container: Container, holder_id: str, org_id: str, environment: str, names: list[str],
    bought: set[str], at: float, picked: Collection[str] = (),
) -> list[Aggregate]:
    """The claims of these names taken for an order or a swap (`holder_id`, unsaved), and the
    cross-organization claim of those being bought; or DomainsHeld. A name in `picked` (free
    inventory the service chose) is held too while the last holder's order keeps it."""
    wanted = [(org_id, n) for n in names] + [(REGISTRY, n) for n in names if n in bought]
    claims: list[Aggregate] = []
    held: dict[str, str] = {}  # name -> organization of the order or swap holding it
    for owner, name in wanted:
        found = container.store.find(claim_id(owner, environment, name), DomainClaim)
        claim = found or DomainClaim(org_id=owner, environment=environment, name=name, at=at)
        holder = _busy_holder(container, claim.order_id) if claim.order_id != holder_id else None
        if holder is not None:
            held.setdefault(name, holder.org_id)
            continue
        taken_since = owner == org_id and name in picked and claim.order_id != holder_id
        if taken_since and _holder_keeps(container, claim.order_id, name):
            held.setdefault(name, org_id)
            continue
        claim.take(holder_id, at)
        claims.append(claim)
    if held:
        raise DomainsHeld(list(held), frozenset(n for n, o in held.items() if o != org_id))
    return claims


def is_taken(container: Container, org_id: str, environment: str, name: str) -> bool:
    """Whether this tenant's free-looking inventory name is not free after all: held by an
    order or swap still being set up, or kept by the order that last took it."""
    claim = container.store.find(claim_id(org_id, environment, name), DomainClaim)
    if not isinstance(claim, DomainClaim):
        return False
    holder = claim.order_id
    return _busy_holder(container, holder) is not None or _holder_keeps(container, holder, name)
