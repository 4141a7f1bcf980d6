"""How a swap looks in responses, lists and webhooks (one shape; documented by `SwapOut` in
`gateway/rest/swaps.py`)."""

from __future__ import annotations

from typing import Any, Literal

from domain.swaps import COMPLETED, PREMIUM, USER_NAMES, Swap
from infra.clock import iso
from infra.ids import public_id


def _iso(ts: float | None) -> str | None:
    return None if ts is None else iso(ts)


# Where a swap leaves the domain it replaces (SwapOut.old_domain_status).
OldDomainStatus = Literal["attached", "warm", "detached"]


def old_domain_status(swap: Swap) -> OldDomainStatus | None:
    """`attached` until the swap completes, then `warm` (premium, until `warm_until`) and
    `detached`; null for a user_names swap, which keeps its domain."""
    if swap.kind == USER_NAMES:
        return None
    if swap.status != COMPLETED:
        return "attached"
    if swap.kind == PREMIUM and swap.old_domain_detached_at is None:
        return "warm"
    return "detached"


def old_domain_detached_at(swap: Swap) -> float | None:
    """A standard swap detaches the old domain as it completes; a premium one at the end of
    its warm period."""
    if swap.kind == PREMIUM:
        return swap.old_domain_detached_at
    return swap.completed_at if old_domain_status(swap) == "detached" else None


def swap_view(swap: Swap) -> dict[str, Any]:
    item = swap.item
    renaming = swap.kind == USER_NAMES
    return {
        "id": public_id("swp", swap.id),
        "type": swap.kind,
        "status": swap.status,
        "environment": swap.environment,
        "order_id": swap.order_id,
        "domain": swap.domain,
        "new_domain": None if renaming else item["domain"],
        "new_domain_id": None if renaming else item["id"],
        "new_domain_source": None if renaming else item["source"],
        "suite": item.get("suite"),
        "personas": swap.personas,
        "inboxes": [
            {
                "address": inbox["address"],
                "suite": inbox["suite"],
                "persona": inbox["persona"],
                "status": inbox["status"],
            }
            for inbox in item.get("inboxes", [])
        ],
        "price_cents": swap.price_cents,
        "charged_cents": swap.charged_cents,
        "refunded_cents": swap.refunded_cents,
        "reason": swap.reason,
        "old_domain_status": old_domain_status(swap),
        "warm_until": _iso(swap.warm_until),
        "old_domain_detached_at": _iso(old_domain_detached_at(swap)),
        "created_at": iso(swap.created_at),
        "updated_at": iso(swap.updated_at),
        "completed_at": _iso(swap.completed_at),
    }
