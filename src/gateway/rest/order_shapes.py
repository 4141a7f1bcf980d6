"""The documented shapes of an order and a pending action (`views/orders.py` builds
them); used only for the OpenAPI document, so that partners can generate typed clients."""

from __future__ import annotations

from typing import Any

import msgspec

from domain.orders import ItemSource
from gateway.rest.schema_notes import ResponseDoc
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


class PendingActionOut(msgspec.Struct):
    id: str  # act_
    order_id: str
    status: ActionStatus
    kind: str
    field: str
    message: str
    details: dict[str, Any]
    created_at: str
    resolved_at: str | None


class PendingActionList(msgspec.Struct):
    data: list[PendingActionOut]
    links: Links
    meta: Meta


ONE_ORDER = ResponseDoc(OrderResponse, description="The order")
ORDER_PAGE = ResponseDoc(OrderList, description="A page of orders")
PENDING_PAGE = ResponseDoc(PendingActionList, description="A page of pending actions")
