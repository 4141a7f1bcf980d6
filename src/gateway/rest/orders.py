"""Orders (spec 3, 4.2; decisions.md 3): place, list, read, cancel, pending actions."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.params import Parameter

from domain.errors import invalid
from domain.orders import SOURCE_STATES
from domain.pending_actions import ACTION_STATUSES
from gateway.rest.auth import principal_of
from gateway.rest.idempotency import idempotent, maybe_idempotent, require_idempotency_key
from gateway.rest.json_bodies import decode_body
from gateway.rest.lists import container_of, list_page
from gateway.rest.schema_notes import ResponseDoc
from gateway.rest.strict_bodies import reject_body_properties
from gateway.rest.wallet import INSUFFICIENT_FUNDS
from infra.blocking import run_blocking
from services.orders.commands import PlaceOrder, ResolvePendingAction
from services.orders.current_terms import with_current_terms
from services.orders.use_cases import cancel_order, get_order, place_order, resolve_action
from views.orders import (
    OrderList,
    OrderOut,
    OrderResponse,
    PendingActionList,
    PendingActionOut,
    ResolvedActionResponse,
)

STATUSES = (
    "in_progress",
    "completed",
    "failed",
    "action_required",
    "cancel_scheduled",
    "cancelled",
)
_CANCELLABLE = ", ".join(f"`{state}`" for state in SOURCE_STATES["schedule_cancel"])


# Documentation only: the handlers check filter values themselves, to answer the spec-7
# envelope with `field`; `schema_extra` puts the allowed values in the OpenAPI document.
StatusFilter = Annotated[str | None, Parameter(schema_extra={"enum": list(STATUSES)})]
ActionStatusFilter = Annotated[str | None, Parameter(schema_extra={"enum": list(ACTION_STATUSES)})]


ONE_ORDER = ResponseDoc(OrderResponse, description="The order")
ORDER_PAGE = ResponseDoc(OrderList, description="A page of orders")
PENDING_PAGE = ResponseDoc(PendingActionList, description="A page of pending actions")
# No body at all is `{}`: a nameservers action needs no input, as a cancel needs none.
NO_INPUT = ResolvePendingAction()

# The shared 404 goes only to paths with an id parameter; this one names an id in its body.
UNKNOWN_TARGET: dict[int, ResponseDoc] = {
    404: ResponseDoc(
        None,
        description="not_found (no such workspace or bundle) or sequencer_client_not_found "
        "(no such `destination.client_id`); `field` names the input",
    ),
}
# Placing an order tries a kind i destination's login pair with the provider; a quote does not.
LOGIN_REFUSED: dict[int, ResponseDoc] = {
    422: ResponseDoc(
        None,
        description="provider_credentials_invalid: the provider refused the login pair of a "
        "kind i destination (`field` `destination.password`)",
    ),
}


class OrdersController(Controller):
    path = "/orders"
    tags = ["orders"]

    @post(
        operation_id="createOrder",
        summary="Place an order (domains and suite_a / suite_b licenses for one customer)",
        description=(
            "Requires `Idempotency-Key`; the same key and body within 24 h answers the same "
            "order. Send `bundle_id` or custom `suite_a` / `suite_b` counts, never both "
            "(`order_shape_conflict`). Named `domains` must be owned already "
            "(`domain_not_imported`), number exactly their suite's count "
            "(`domain_count_mismatch`), not be premium, busy on another order "
            "(`domain_already_in_active_order`) or used by a suite that excludes the requested "
            "one (`domain_not_usable_for_provider`). `destination.client_id` is for kind m only "
            "(`sequencer_client_not_found` when unknown); a login pair is accepted on kind i "
            "destinations only. Both modes answer the accepted order `in_progress` and send "
            "the same webhooks in the same order (`order.in_progress`, then "
            "`order.completed` with a `domain.connected` per domain), so code written "
            "against the sandbox runs unchanged live: sandbox keys complete the order at "
            "once after the answer (well within a second; follow it with `GET "
            "/orders/{id}` or the webhooks) and never bill; live keys are charged at "
            "acceptance (402 `insufficient_funds` when the wallet cannot cover "
            "`price_cents`) and provisioned step by step. A `profile_picture_url` that is "
            "not https or not public sends the order to `action_required`."
        ),
        responses={201: ONE_ORDER, **INSUFFICIENT_FUNDS, **UNKNOWN_TARGET, **LOGIN_REFUSED},
    )
    async def create(self, request: Request[Any, Any, Any]) -> Response[OrderResponse]:
        principal = principal_of(request)
        container = container_of(request)
        require_idempotency_key(request)
        command = await decode_body(request, PlaceOrder)
        return await idempotent(
            request,
            lambda: OrderResponse(place_order(container, principal, command)),
            status_code=201,
        )

    @get(
        operation_id="listOrders",
        summary="List orders (and domain purchases), newest first",
        description="Filters: `status`, `workspace_id`.",
        responses={200: ORDER_PAGE},
    )
    async def list_orders(
        self,
        request: Request[Any, Any, Any],
        status: StatusFilter = None,
        workspace_id: str | None = None,
        per_page: int | None = None,
        page_token: str | None = None,
    ) -> OrderList:
        if status is not None and status not in STATUSES:
            raise invalid(f"status must be one of {', '.join(STATUSES)}.", "status")
        page = list_page(
            request,
            table="orders",
            where=[
                ("tenant = ?", principal_of(request).tenant),
                ("status = ?", status),
                ("workspace_id = ?", workspace_id),
            ],
            filters={"status": status, "workspace_id": workspace_id},
            per_page=per_page,
            page_token=page_token,
            render=lambda row: msgspec.json.decode(row["doc"], type=OrderOut),
        )
        page["data"] = with_current_terms(container_of(request), page["data"])
        return msgspec.convert(page, OrderList)

    @get(
        "/pending",
        operation_id="listPendingActions",
        summary="Pending actions (orders blocked on partner input)",
        description="Filters: `order_id`, `status` (`pending`, `resolved`, or `cancelled`: the "
        "order's cancellation was accepted while it waited).",
        responses={200: PENDING_PAGE},
    )
    async def list_pending(
        self,
        request: Request[Any, Any, Any],
        order_id: str | None = None,
        status: ActionStatusFilter = None,
        per_page: int | None = None,
        page_token: str | None = None,
    ) -> PendingActionList:
        if status is not None and status not in ACTION_STATUSES:
            raise invalid(f"status must be one of {', '.join(ACTION_STATUSES)}.", "status")
        page = list_page(
            request,
            table="pending_actions",
            where=[
                ("tenant = ?", principal_of(request).tenant),
                ("order_id = ?", order_id),
                ("status = ?", status),
            ],
            filters={"order_id": order_id, "status": status},
            per_page=per_page,
            page_token=page_token,
            render=lambda row: msgspec.json.decode(row["doc"], type=PendingActionOut),
        )
        return msgspec.convert(page, PendingActionList)

    @post(
        "/pending/{action_id:str}/resolve",
        operation_id="resolvePendingAction",
        summary="Supply the missing input; the order resumes",
        description=(
            "For kind `profile_picture_url`: send a public https `profile_picture_url`. "
            "For kind `nameservers`: send `{}` once the nameservers in "
            "`details.nameserver_groups` are set; 409 `domains_not_submittable` while the DNS "
            "does not see them yet. Answers the resolved action with the order (`order`), "
            "`in_progress` again in both modes; a sandbox order then completes at once, a "
            "live one goes on step by step."
        ),
        status_code=200,
        responses={
            200: ResponseDoc(ResolvedActionResponse, description="The action and its order")
        },
    )
    async def resolve(
        self,
        request: Request[Any, Any, Any],
        action_id: str,
        data: ResolvePendingAction | None = None,
    ) -> Response[ResolvedActionResponse]:
        principal = principal_of(request)
        container = container_of(request)
        command = NO_INPUT if data is None else data
        return await maybe_idempotent(
            request,
            lambda: ResolvedActionResponse(
                resolve_action(container, principal, action_id, command)
            ),
            status_code=200,
        )

    @get(
        "/{order_id:str}",
        operation_id="getOrder",
        description="An order (`ord_`) as it is now: status, destination, domains with their "
        "inboxes and DNS records, price and what was charged or refunded. Poll it, or"
        " follow the `order.*` webhooks.",
        summary="One order",
        responses={200: ONE_ORDER},
    )
    async def get_one(self, request: Request[Any, Any, Any], order_id: str) -> OrderResponse:
        container = container_of(request)
        principal = principal_of(request)
        view = await run_blocking(lambda: get_order(container, principal, order_id))
        return OrderResponse(view)

    @post(
        "/{order_id:str}/cancel",
        operation_id="cancelOrder",
        before_request=reject_body_properties,
        summary="Cancel an order: `cancel_scheduled` now, `cancelled` after the grace window",
        description=(
            "Domains are released (free for a new order) when the cancellation finishes. An "
            "order cancelled before completion is refunded its licenses and the registration of "
            "every domain it had not registered yet (such a domain leaves the order); a domain "
            "already registered stays yours and its registration charge stands. A completed "
            f"purchase cannot be cancelled. An order can be cancelled while it is {_CANCELLABLE}; "
            "in any other status (`cancel_scheduled`, `cancelled`, `failed`) the answer is 409 "
            "`order_state_conflict`. The order's open swaps fail at once (`swap.failed`, a bought "
            "domain's charge refunded). While the pool links one of its domains to a workspace "
            "(`reserved`, `assigned`, `releasing`) the answer is 409 `pool_domains_linked` "
            "(`details.domains`): release it from the pool first."
        ),
        status_code=200,
        responses={200: ONE_ORDER},
    )
    async def cancel(
        self, request: Request[Any, Any, Any], order_id: str
    ) -> Response[OrderResponse]:
        container = container_of(request)
        principal = principal_of(request)
        return await maybe_idempotent(
            request,
            lambda: OrderResponse(cancel_order(container, principal, order_id)),
            status_code=200,
        )
