"""Public `swap.*` events (spec 6) from the Swap aggregate.

Every one carries the swap as `GET /swaps/{id}` shows it at that moment: `swap.created`
(accepted), `swap.in_progress` (picked up by the swap workers, or resumed after partner
input), `swap.completed` (new domain live on the order; standard: old one detached; premium:
old one warm until `warm_until`; user_names: inboxes renamed), `swap.failed` (with `reason`
and `refunded_cents`) and `swap.action_required` (`reason` says what the partner must do).
A completed standard or premium swap also sends `domain.connected` for the new domain.
"""

from __future__ import annotations

from typing import Any, cast

import msgspec
from eventsourcing.domain import DomainEvent

from domain.domains import listed_source, usable_for
from domain.orders import COMPLETED, Order
from domain.swaps import USER_NAMES, Swap
from infra.ids import parse_id, public_id
from infra.store import EventStore
from views.orders import domain_view
from views.swaps import swap_view
from webhooks.public_events import PublicEvent, event_about, maps

_TYPES: dict[type[DomainEvent], str] = {
    Swap.Created: "swap.created",
    Swap.Started: "swap.in_progress",
    Swap.Resumed: "swap.in_progress",
    Swap.Completed: "swap.completed",
    Swap.Failed: "swap.failed",
    Swap.ActionRequired: "swap.action_required",
}


@maps(*_TYPES)
def swap_moved(event: Any, store: EventStore) -> list[PublicEvent]:
    swap: Swap = store.repository.get(event.originator_id, version=event.originator_version)
    events = [
        event_about(
            swap, _TYPES[type(event)], public_id("swp", swap.id),
            msgspec.to_builtins(swap_view(swap)), swap.updated_at,
        )
    ]
    if type(event) is Swap.Completed and swap.kind != USER_NAMES:
        events.append(
            PublicEvent(
                type="domain.connected",
                org_id=swap.org_id,
                environment=swap.environment,
                resource_id=swap.item["id"],
                data=_connected_domain(swap, store),
                created_at=swap.updated_at,
            )
        )
    return events


def _connected_domain(swap: Swap, store: EventStore) -> dict[str, Any]:
    """The new domain as `GET /domains` shows its connected row (the link fields an order's
    `domain.connected` carries), and the swap that brought it."""
    item = swap.item
    order = store.find(parse_id("ord", swap.order_id), Order)  # its customer never changes
    return {
        **msgspec.to_builtins(domain_view(item, COMPLETED)),
        "category": "connected",
        "source": listed_source(item),
        "order_id": swap.order_id,
        "customer_id": order.customer_id if isinstance(order, Order) else None,
        "usable_for": usable_for({cast(str, item["suite"]), *item.get("shared_with", ())}),
        "swap_id": public_id("swp", swap.id),
    }
