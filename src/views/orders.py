"""How an order and a pending action look in responses, lists and webhooks (one shape)."""

from __future__ import annotations

from typing import Any

from domain.orders import PURCHASE, Order, shown_item_status
from domain.pending_actions import PendingAction
from infra.clock import iso
from infra.ids import public_id


def _iso(ts: float | None) -> str | None:
    return None if ts is None else iso(ts)


def domain_view(item: dict[str, Any], order_status: str) -> dict[str, Any]:
    return {
        "id": item["id"],
        "domain": item["domain"],
        "suite": item["suite"],
        # The mail provider the domain is connected to; null for a bare purchase.
        "provider": item["suite"],
        "status": shown_item_status(order_status, item),
        "source": item["source"],
        "auto_renew": item.get("auto_renew", True),
        "price_cents": item["price_cents"],
        "forwarding_url": item.get("forwarding_url"),
        "inboxes": [
            {
                "address": i["address"],
                "suite": i["suite"],
                "persona": i["persona"],
                "status": i["status"],
            }
            for i in item.get("inboxes", [])
        ],
        "dns_records": item.get("dns_records", []),
    }


def destination_view(order: Order) -> dict[str, Any] | None:
    """The workspace the order routes to (None for a purchase without one)."""
    if order.destination is None:
        return None
    return {
        "workspace_id": order.destination["workspace_id"],
        "client_id": order.destination.get("client_id"),
        "provider": order.destination.get("provider"),
    }


def _purchased_view(item: dict[str, Any], order_status: str) -> dict[str, Any]:
    """A purchase's domain once bought is inventory (spec 2.4 `available`: owned, on no
    order), as `GET /domains` shows it, not a live connected domain."""
    view = domain_view(item, order_status)
    if view["status"] == "active":
        view["status"] = "available"
    return view


def order_view(order: Order) -> dict[str, Any]:
    destination = destination_view(order)
    shown = _purchased_view if order.kind == PURCHASE else domain_view
    # Both suites always appear (decisions.md 3: `licenses` (`suite_a`, `suite_b`)); 0 = none.
    licenses = {
        suite: int(counts.get("domains", 0)) * int(counts.get("inboxes_per_domain", 0))
        for suite in ("suite_a", "suite_b")
        for counts in [order.shape.get(suite, {})]
    }
    return {
        "id": public_id("ord", order.id),
        "type": order.kind,
        "status": order.status,
        "environment": order.environment,
        "destination": destination,
        "customer_id": order.customer_id,
        "bundle_id": order.bundle_id,
        "licenses": licenses,
        "sizing": order.shape,
        "domains": [shown(item, order.status) for item in order.domains],
        # Old domains a premium swap keeps sending until `warm_until`, then detaches.
        "warm_domains": [
            {
                **domain_view(item, order.status),
                "warm_until": iso(item["warm_until"]),
                "swap_id": item["swap_id"],
            }
            for item in order.warm_domains
        ],
        "personas": order.personas,
        "profile_picture_url": order.profile_picture_url,
        "forwarding_url": order.forwarding_url,
        "price_cents": order.price["total_cents"],
        "currency": order.price["currency"],
        "price": order.price,
        "charged_cents": order.charged_cents,
        "refunded_cents": order.refunded_cents,
        "pending_action_id": order.pending_action_id,
        "reason": order.reason,
        "cancel_at": _iso(order.cancel_after),
        "created_at": iso(order.created_at),
        "updated_at": iso(order.updated_at),
        "completed_at": _iso(order.completed_at),
        "cancelled_at": _iso(order.cancelled_at),
    }


def pending_action_view(action: PendingAction) -> dict[str, Any]:
    return {
        "id": public_id("act", action.id),
        "order_id": action.order_id,
        "status": action.status,
        "kind": action.kind,
        "field": action.field,
        "message": action.message,
        "details": action.details,
        "created_at": iso(action.created_at),
        "resolved_at": _iso(action.resolved_at),
    }
