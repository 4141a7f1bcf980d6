"""How an order, a pending action and a quote look in responses, lists and webhooks: each shape
defined once, as the Struct the service, the read model and the webhook mapper build."""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar, cast

import msgspec

from domain.order_payloads import license_count
from domain.order_steps import NAMESERVERS, PROFILE_PICTURE
from domain.orders import PURCHASE, DomainItem, ItemSource, Order, shown_item_status
from domain.pending_actions import PendingAction
from infra.clock import iso
from infra.ids import public_id
from schema.rules import documented
from schema.vocabulary import (
    ActionStatus,
    Active,
    DomainStatus,
    Environment,
    OrderStatus,
    OrderType,
    Provider,
    Suite,
)
from views.pages import Links, Meta


class Inbox(msgspec.Struct):
    address: str  # first.last@domain
    suite: Suite
    persona: dict[str, Any]  # first_name, last_name
    status: Active


class OrderDomain(msgspec.Struct):
    id: str  # dom_
    domain: str
    suite: Suite | None
    provider: Suite | None  # the mail suite; null on a bare purchase
    status: DomainStatus
    source: ItemSource
    auto_renew: bool
    price_cents: int
    forwarding_url: str | None
    inboxes: list[Inbox]
    dns_records: list[dict[str, Any]]


class WarmDomain(OrderDomain):
    warm_until: str
    swap_id: str


class Destination(msgspec.Struct):
    workspace_id: str  # wrk_
    client_id: int | None
    provider: Provider | None


class Licenses(msgspec.Struct):
    suite_a: int
    suite_b: int


class OrderOut(msgspec.Struct):
    """An order (`ord_`); a domain purchase is an order of type `purchase`."""

    id: str
    type: OrderType
    status: OrderStatus
    environment: Environment
    destination: Destination | None
    customer_id: str | None
    bundle_id: str | None
    licenses: Licenses
    sizing: dict[str, Any]
    domains: list[OrderDomain]
    warm_domains: list[WarmDomain]
    personas: list[dict[str, Any]] | None
    profile_picture_url: str | None
    forwarding_url: str | None
    price_cents: int
    currency: str
    price: dict[str, Any]
    charged_cents: int
    refunded_cents: int
    pending_action_id: str | None
    reason: str | None
    cancel_at: str | None
    created_at: str
    updated_at: str
    completed_at: str | None
    cancelled_at: str | None


class OrderResponse(msgspec.Struct):
    data: OrderOut


class OrderList(msgspec.Struct):
    data: list[OrderOut]
    links: Links
    meta: Meta


# What the partner must give: a public profile picture URL, or the customer's nameservers
# pointed at ours (`domain.order_steps`).
ActionKind = Annotated[str, documented(enum=[PROFILE_PICTURE, NAMESERVERS])]


class PendingActionOut(msgspec.Struct):
    id: str  # act_
    order_id: str
    status: ActionStatus
    kind: ActionKind
    field: str
    message: str
    details: dict[str, Any]
    created_at: str
    resolved_at: str | None


class PendingActionList(msgspec.Struct):
    data: list[PendingActionOut]
    links: Links
    meta: Meta


class ResolvedActionOut(PendingActionOut):
    """The resolved pending action, with its order as it stands after resuming."""

    order: OrderOut


class ResolvedActionResponse(msgspec.Struct):
    data: ResolvedActionOut


class PriceLine(msgspec.Struct, kw_only=True):
    """One priced line: `license` lines carry `suite`, `domain_registration` lines `domain`."""

    type: Literal["license", "domain_registration"]
    # Each kind of line has its one extra field second, as the price breakdown is written.
    suite: Suite | msgspec.UnsetType = msgspec.UNSET
    domain: str | msgspec.UnsetType = msgspec.UNSET
    quantity: int
    unit_price_cents: int
    amount_cents: int


class QuoteOut(msgspec.Struct, kw_only=True):
    """The price of an order body; the two wallet fields are answered by live keys only."""

    currency: str
    total_cents: int
    lines: list[PriceLine]
    price_cents: int  # equal to total_cents: the name an order carries its price under
    environment: Environment
    billed: bool  # true on live keys: the order would be charged to the wallet
    domains_to_register: int
    domains_from_inventory: int
    wallet_balance_cents: int | msgspec.UnsetType = msgspec.UNSET
    covered_by_wallet: bool | msgspec.UnsetType = msgspec.UNSET


class QuoteResponse(msgspec.Struct):
    data: QuoteOut


def _iso(ts: float | None) -> str | None:
    return None if ts is None else iso(ts)


def _inboxes(item: DomainItem) -> list[Inbox]:
    return [
        Inbox(address=i["address"], suite=i["suite"], persona=i["persona"], status=i["status"])
        for i in item.get("inboxes", [])
    ]


D = TypeVar("D", bound=OrderDomain)


def _domain(kind: type[D], item: DomainItem, status: str, **extra: Any) -> D:
    return kind(
        id=item["id"],
        domain=item["domain"],
        suite=item["suite"],
        # The mail provider the domain is connected to; null for a bare purchase.
        provider=item["suite"],
        status=cast(DomainStatus, status),
        source=item["source"],
        auto_renew=item.get("auto_renew", True),
        price_cents=item["price_cents"],
        forwarding_url=item.get("forwarding_url"),
        inboxes=_inboxes(item),
        dns_records=item.get("dns_records", []),
        **extra,
    )


def domain_view(item: DomainItem, order_status: str) -> OrderDomain:
    return _domain(OrderDomain, item, shown_item_status(order_status, item))


def destination_view(order: Order) -> Destination | None:
    """The workspace the order routes to (None for a purchase without one)."""
    if order.destination is None:
        return None
    return Destination(
        workspace_id=order.destination["workspace_id"],
        client_id=order.destination.get("client_id"),
        provider=cast(Provider, order.destination.get("provider")),
    )


def _purchased_view(item: DomainItem, order_status: str) -> OrderDomain:
    """A purchase's domain once bought is inventory (spec 2.4 `available`: owned, on no
    order), as `GET /domains` shows it, not a live connected domain."""
    status = shown_item_status(order_status, item)
    return _domain(OrderDomain, item, "available" if status == "active" else status)


def order_view(order: Order) -> OrderOut:
    shown = _purchased_view if order.kind == PURCHASE else domain_view
    shape = order.shape
    return OrderOut(
        id=public_id("ord", order.id),
        type=cast(OrderType, order.kind),
        status=cast(OrderStatus, order.status),
        environment=cast(Environment, order.environment),
        destination=destination_view(order),
        customer_id=order.customer_id,
        bundle_id=order.bundle_id,
        # Both suites always appear (decisions.md 3: `licenses` (`suite_a`, `suite_b`)); 0 = none.
        licenses=Licenses(
            suite_a=license_count(shape, "suite_a"), suite_b=license_count(shape, "suite_b")
        ),
        sizing=shape,
        domains=[shown(item, order.items_shown_as) for item in order.domains],
        # Old domains a premium swap keeps sending until `warm_until`, then detaches.
        warm_domains=[
            _domain(
                WarmDomain,
                item,
                shown_item_status(order.items_shown_as, item),
                warm_until=iso(item["warm_until"]),
                swap_id=item["swap_id"],
            )
            for item in order.warm_domains
        ],
        personas=order.personas,
        profile_picture_url=order.profile_picture_url,
        forwarding_url=order.forwarding_url,
        price_cents=order.price["total_cents"],
        currency=order.price["currency"],
        price=dict(order.price),
        charged_cents=order.charged_cents,
        refunded_cents=order.refunded_cents,
        pending_action_id=order.pending_action_id,
        reason=order.reason,
        cancel_at=_iso(order.cancel_after),
        created_at=iso(order.created_at),
        updated_at=iso(order.updated_at),
        completed_at=_iso(order.completed_at),
        cancelled_at=_iso(order.cancelled_at),
    )


def _action_fields(action: PendingAction) -> dict[str, Any]:
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


def pending_action_view(action: PendingAction) -> PendingActionOut:
    return PendingActionOut(**_action_fields(action))


def resolved_action_view(action: PendingAction, order: Order) -> ResolvedActionOut:
    """The resolved action with its order after resuming (`POST /orders/pending/{id}/resolve`)."""
    return ResolvedActionOut(**_action_fields(action), order=order_view(order))
