"""How swaps end other than by completing: failed (and refunded) when their order or domain
goes, and the warm domains premium swaps keep for an order that is cancelled."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from eventsourcing.domain import Aggregate

from domain.orders import DomainItem, Order
from domain.swaps import COMPLETED, OPEN_STATES, Swap
from infra.ids import parse_id, public_id
from services.accounts.wallet import load_wallet

if TYPE_CHECKING:
    from domain.wallet import Wallet
    from runtime.container import Container


def find_swap(container: Container, swap_id: str) -> Swap | None:
    found = container.store.find(parse_id("swp", swap_id), Swap)
    return found if isinstance(found, Swap) else None


def fail_swap(
    container: Container, swap: Swap, reason: str, at: float, wallet: Wallet | None = None
) -> list[Aggregate]:
    """The swap failed and its charge refunded: to `wallet` when the caller already loaded it
    (several swaps failing in one save share one wallet), else to the one loaded here."""
    refund = swap.refundable_cents
    swap.fail(reason, refund, at)
    if refund <= 0:
        return []
    wallet = wallet or load_wallet(container, swap.org_id, swap.environment)
    wallet.refund(refund, swap.order_id, f"Refund: swap {public_id('swp', swap.id)} failed", at)
    return [wallet]


def _fail_each(
    container: Container, swaps: list[Swap], reason: Callable[[Swap], str], at: float
) -> list[Aggregate]:
    """The open ones of these swaps failed, each refunded to the one wallet, unsaved."""
    failing = [swap for swap in swaps if swap.is_open]
    if not failing:
        return []
    wallet = load_wallet(container, failing[0].org_id, failing[0].environment)
    refunded = [bool(fail_swap(container, swap, reason(swap), at, wallet)) for swap in failing]
    return [*failing, *([wallet] if any(refunded) else [])]


def fail_swaps_of_lapsed(
    container: Container, tenant: str, name: str, at: float
) -> list[Aggregate]:
    """The open swaps of a domain that lapsed, failed (and refunded), unsaved: the domain left
    its order, so none of them can complete, and one waiting on the partner would wait for
    good, holding its new domain. A premium swap keeping it warm shows it detached now: its
    warm period has nothing left to end."""
    with container.read_db.read() as cur:
        rows = cur.execute(
            "SELECT id FROM swaps WHERE tenant = ? AND domain = ? AND status IN (?, ?, ?, ?)",
            (tenant, name, *OPEN_STATES, COMPLETED),
        ).fetchall()
    swaps = [swap for row in rows if (swap := find_swap(container, str(row["id"]))) is not None]
    warm = [s for s in swaps if s.warm_until is not None and s.old_domain_detached_at is None]
    for swap in warm:
        swap.detach_old_domain(at)
    failed = _fail_each(
        container, swaps, lambda swap: f"{name} lapsed: it left {swap.order_id}.", at
    )
    return [*warm, *failed]


def fail_swaps_of_cancelled(container: Container, order: Order, at: float) -> list[Aggregate]:
    """The order's open swaps, failed (and refunded), unsaved: a cancelled order takes no new
    domain, and a swap waiting on the partner would otherwise wait for good. The order saves
    with them, so a swap accepted concurrently conflicts and is decided again."""
    claimed = dict.fromkeys((order.swap_claims or {}).values())
    swaps = [swap for swap_id in claimed if (swap := find_swap(container, swap_id)) is not None]
    return _fail_each(
        container, swaps,
        lambda swap: (
            f"{swap.order_id} is being cancelled: the swap of {swap.domain} will not be made."
        ),
        at,
    )


def detach_warm_domains_of_cancelled(
    container: Container, order: Order, at: float
) -> tuple[list[DomainItem], list[Aggregate]]:
    """The old domains premium swaps keep warm for a cancelled order, detached from it now
    (their swaps say so), as the items the cancel releases, with the swaps to save: the order
    sends on none of them any more."""
    released: list[DomainItem] = []
    swaps: list[Aggregate] = []
    for item in list(order.warm_domains):
        order.detach_warm_domain(item["domain"], at)
        released.append(item)  # as the order's own detach keeps it; the cancel shapes it
        swap = find_swap(container, str(item["swap_id"])) if item.get("swap_id") else None
        if swap is not None and swap.warm_until is not None and swap.old_domain_detached_at is None:
            swap.detach_old_domain(at)
            swaps.append(swap)
    return released, swaps
