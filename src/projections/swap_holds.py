"""What the inventory shows of a domain a swap is bringing onto an order (spec 2.4:
`in_progress` = being set up): an owned domain stays `inventory` until the swap completes (the
order's `DomainSwapped` then connects it), but it is no longer `available` meanwhile, since
nothing else may take it. A failed swap gives it back."""

from __future__ import annotations

from typing import Any

from domain.swaps import USER_NAMES, Swap
from projections.base import on


class SwapHolds:
    """A mixin of the domain inventory read model."""

    store: Any

    @on(Swap.Created, Swap.Failed)
    def swap_took_or_gave_back(self, cur: Any, event: Any, position: int) -> None:
        swap: Swap = self.store.at_version(event.originator_id, event.originator_version)
        if swap.kind == USER_NAMES or swap.item.get("source") != "inventory":
            return
        held = type(event) is Swap.Created
        before, after = ("available", "in_progress") if held else ("in_progress", "available")
        cur.execute(
            "UPDATE domains SET status = ?, updated_at = ? WHERE id = ? AND status = ? "
            "AND category = 'inventory'",
            (after, swap.updated_at, swap.item["id"], before),
        )
