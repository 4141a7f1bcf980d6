"""Public `order.*` events (and `domain.connected` when an order's domains go live,
`domain.action_required` for each domain an order waits on for its nameservers).

`order.in_progress` carries `{id, status, destination}`; `order.completed` the full order as
`GET /orders/{id}` answers it; the others the order's id, status, destination and what changed
(spec changelog 2026-07-10: `destination` in order responses and webhooks).
"""

from __future__ import annotations

from typing import Any, cast

import msgspec

from domain.domains import NAMESERVERS_NOT_POINTED, listed_source, usable_for
from domain.orders import ACTION_REQUIRED, PURCHASE, DomainItem, Order, shown_item_status
from domain.pending_actions import PendingAction
from infra.clock import iso
from infra.ids import parse_id, public_id
from infra.store import EventStore
from projections.domains import unregistered_at_cancel
from views.orders import destination_view, domain_view, order_view
from webhooks.domain_events import forwarding_data
from webhooks.public_events import PublicEvent, event_about, maps


def _order_at(event: Any, store: EventStore) -> Order:
    order: Order = store.at_version(event.originator_id, event.originator_version)
    return order


def _event(order: Order, type_: str, data: dict[str, Any], at: float) -> PublicEvent:
    return event_about(order, type_, public_id("ord", order.id), data, at)


def _brief(order: Order, **extra: Any) -> dict[str, Any]:
    return {
        "id": public_id("ord", order.id),
        "status": order.status,
        "destination": msgspec.to_builtins(destination_view(order)),
        **extra,
    }


@maps(Order.Placed, Order.Resumed)
def in_progress(event: Any, store: EventStore) -> list[PublicEvent]:
    order = _order_at(event, store)
    return [_event(order, "order.in_progress", _brief(order), order.updated_at)]


@maps(Order.Completed)
def completed(event: Any, store: EventStore) -> list[PublicEvent]:
    order = _order_at(event, store)
    view: dict[str, Any] = msgspec.to_builtins(order_view(order))
    events = [_event(order, "order.completed", view, event.at)]
    if order.kind == PURCHASE:
        return events
    for item in order.domains:
        data = _connected_domain(order, item)
        events.append(event_about(order, "domain.connected", item["id"], data, event.at))
    # After every other event of the completion, so those keep the ids they always had.
    events += [
        event_about(order, "domain.forwarding_failed", item["id"],
                    _forwarding_refused(order, item), event.at)
        for item in order.domains if item.get("forwarding_failure")
    ]
    return events


def _forwarding_refused(order: Order, item: DomainItem) -> dict[str, Any]:
    """The order's forwarding target was not applied to this domain."""
    return forwarding_data(
        item,
        str(order.forwarding_url),
        shown_item_status(order.items_shown_as, item),
        "failed",
        item["forwarding_failure"],
        order_id=public_id("ord", order.id),
    )


def _connected_domain(order: Order, item: DomainItem) -> dict[str, Any]:
    """An order's domain as `GET /domains` shows a connected row."""
    return {
        **msgspec.to_builtins(domain_view(item, order.items_shown_as)),
        "category": "connected",
        "source": listed_source(item),
        "order_id": public_id("ord", order.id),
        "customer_id": order.customer_id,
        "usable_for": usable_for({cast(str, item["suite"]), *item.get("shared_with", ())}),
    }


@maps(Order.Failed)
def failed(event: Any, store: EventStore) -> list[PublicEvent]:
    order = _order_at(event, store)
    data = _brief(order, reason=order.reason, refunded_cents=event.refund_cents)
    return [_event(order, "order.failed", data, event.at)]


@maps(Order.ActionRequired)
def action_required(event: Any, store: EventStore) -> list[PublicEvent]:
    order = _order_at(event, store)
    data = _brief(order, pending_action_id=order.pending_action_id, reason=order.reason)
    events = [_event(order, "order.action_required", data, event.at)]
    action = store.find(parse_id("act", event.action_id), PendingAction)
    # A purchase's domains are inventory, not connected: no domain event (as on completion).
    if isinstance(action, PendingAction) and order.kind != PURCHASE:
        # Spec 3: `domain.action_required` accompanies every domain's move to it.
        events += _domains_needing_attention(order, action, event.at)
    return events


def _domains_needing_attention(
    order: Order, action: PendingAction, at: float
) -> list[PublicEvent]:
    """One event per domain the order's wait puts in `action_required` (those not live yet,
    as `shown_item_status` shows them); a domain waiting for its own nameservers says which."""
    groups = action.details.get("nameserver_groups", [])
    events = []
    for item in order.domains:
        if shown_item_status(ACTION_REQUIRED, item) != ACTION_REQUIRED:
            continue
        if item.get("shared_with"):
            continue  # live on the completed orders that use it: nothing of it needs the partner
        reason = action.reason_for(item["domain"])
        data = {
            **_connected_domain(order, item),
            "reason": reason,
            "pending_action_id": public_id("act", action.id),
        }
        if reason == NAMESERVERS_NOT_POINTED:
            data["nameservers"] = [g for g in groups if item["domain"] in g["domains"]]
        events.append(
            event_about(order, "domain.action_required", item["id"], data, at)
        )
    return events


@maps(Order.CancelScheduled)
def cancel_scheduled(event: Any, store: EventStore) -> list[PublicEvent]:
    order = _order_at(event, store)
    data = _brief(order, cancel_at=iso(event.cancel_after))
    return [_event(order, "order.cancel_scheduled", data, event.at)]


@maps(Order.Cancelled)
def cancelled(event: Any, store: EventStore) -> list[PublicEvent]:
    order = _order_at(event, store)
    data = _brief(
        order,
        # A name another order still uses is not released (its item says so).
        released_domains=[
            item["domain"] for item in order.domains if not item.get("kept_by_another")
        ],
        # Never registered: they left the order and the inventory (no domain event says so).
        dropped_domains=[item["domain"] for item in unregistered_at_cancel(store, event)],
        refunded_cents=event.refund_cents,
    )
    return [_event(order, "order.cancelled", data, event.at)]
