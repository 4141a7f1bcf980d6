"""Webhook events with their deliveries (spec 6), and the organization's webhook endpoint."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, Response, get, post, put
from litestar.params import Parameter

from domain.errors import NotFound, invalid
from gateway.rest.auth import principal_of
from gateway.rest.idempotency import maybe_idempotent
from gateway.rest.lists import container_of, list_page
from gateway.rest.schema_notes import ResponseDoc
from gateway.rest.strict_bodies import reject_body_properties, request_rules
from infra.blocking import run_blocking
from runtime.container import Container
from schema.event_types import EVENT_TYPES
from services.accounts.keys import Principal
from views.events import (
    EndpointResponse,
    EndpointSecretResponse,
    EventPage,
    EventResponse,
    RedeliveredResponse,
)
from views.pages import Links, Meta
from webhooks.commands import RedeliverEvents, SetWebhookEndpoint
from webhooks.deliveries import STATUSES
from webhooks.endpoints import endpoints_of, refuse_sandbox_change
from webhooks.event_log import POSITION_STRIDE
from webhooks.events_view import (
    EVENT_COLUMNS,
    EVENTS_FROM,
    STATUS_SQL,
    one_event,
    render_page,
    sandbox_times,
)
from webhooks.recovery import redeliver_event, redeliver_events
from webhooks.test_event import TEST_EVENT_TYPE

# Documentation only: the handler checks the value itself, to answer the spec-7 envelope with
# `field`, so the enum reaches the OpenAPI document through `schema_extra`.
StatusFilter = Annotated[str | None, Parameter(schema_extra={"enum": list(STATUSES)})]
TypeFilter = Annotated[str | None, Parameter(schema_extra={"enum": list(EVENT_TYPES)})]


ONE_EVENT = ResponseDoc(EventResponse, description="The event with every delivery attempt")
NEW_SECRET = ResponseDoc(EndpointSecretResponse, description="The URL and its new secret")


async def _show_everything_stored(request: Request[Any, Any, Any]) -> None:
    """The log is a read model, while `GET /orders/{id}` and the like read the aggregate: a
    partner who saw an order completed finds its `order.completed` here on the next call."""
    await run_blocking(container_of(request).unit_of_work.wait_for_stored)


class EventsController(Controller):
    path = "/events"
    tags = ["events"]

    @get(
        operation_id="listEvents",
        summary="List webhook events with their delivery status and attempts",
        description=(
            "Newest first. Filters: `type` (an event type, e.g. `order.completed`), `status` (`pending`, "
            "`delivered`, `failed`), `resource_id` (e.g. `ord_...`). Shows every event stored "
            "before the request, also those of work that finished in the background."
        ),
        responses={200: ResponseDoc(EventPage, description="A page of events")},
    )
    async def list_events(
        self,
        request: Request[Any, Any, Any],
        type: TypeFilter = None,  # noqa: A002 - the public query parameter is called type
        status: StatusFilter = None,
        resource_id: str | None = None,
        per_page: int | None = None,
        page_token: str | None = None,
    ) -> EventPage:
        if status is not None and status not in STATUSES:
            raise invalid("status must be pending, delivered or failed.", "status")
        if type is not None and type not in EVENT_TYPES:
            raise invalid("type must be an event type of the catalog (spec 6).", "type")
        container, tenant = container_of(request), principal_of(request).tenant
        await _show_everything_stored(request)
        page = list_page(
            request,
            table=EVENTS_FROM,
            columns=EVENT_COLUMNS,
            where=[
                ("e.tenant = ?", tenant),
                ("e.type = ?", type),
                (STATUS_SQL, status),
                ("e.resource_id = ?", resource_id),
            ],
            filters={"type": type, "status": status, "resource_id": resource_id},
            per_page=per_page,
            page_token=page_token,
            render=lambda row: row,
        )
        return EventPage(
            data=render_page(container.read_db, page["data"], sandbox_times(container, tenant)),
            links=Links(**page["links"]),
            meta=Meta(**page["meta"]),
        )

    @get(
        "/{event_id:str}",
        operation_id="getEvent",
        description="An event of the organization's log (`evt_`) with its payload, delivery "
        "status and every delivery attempt, oldest first (status code or error, and "
        "when).",
        summary="One webhook event with every attempt",
        responses={200: ONE_EVENT},
    )
    async def get_event(self, request: Request[Any, Any, Any], event_id: str) -> EventResponse:
        await _show_everything_stored(request)
        container, tenant = container_of(request), principal_of(request).tenant
        found = one_event(container.read_db, tenant, event_id, sandbox_times(container, tenant))
        if found is None:
            raise NotFound("event")
        return EventResponse(found)

    @post(
        "/redeliver",
        operation_id="redeliverEvents",
        summary="Send every event since a moment again (recovery after an outage)",
        description=(
            "Redelivers every event of this key's organization and environment whose "
            "`created_at` is at or after `since` (only those in `status`, when given: "
            "`failed`, `pending` or `delivered`), oldest first, each with its own `evt_` id "
            "(receivers that deduplicate by id apply each once). Each gets one new attempt: "
            "a delivered or failed event that fails it again is `failed` again at once, a "
            "pending one keeps the rest of its retries. Answers how many were queued; follow "
            "them in `GET /events`. `full` preset only; `Idempotency-Key` is optional and "
            "honoured when sent (a retry answers the first count and queues nothing more)."
        ),
        status_code=202,
        responses={
            202: ResponseDoc(RedeliveredResponse, description="How many events were queued")
        },
    )
    async def redeliver_since(
        self, request: Request[Any, Any, Any], data: RedeliverEvents
    ) -> Response[RedeliveredResponse]:
        container = container_of(request)
        principal = principal_of(request)

        def queue() -> RedeliveredResponse:
            tenant, org_id = principal.tenant, principal.org_id
            return RedeliveredResponse(redeliver_events(container, tenant, org_id, data))

        return await maybe_idempotent(request, queue, status_code=202)

    @post(
        "/{event_id:str}/redeliver",
        operation_id="redeliverEvent",
        description="Queues one more delivery of the event to the current webhook URL, signed "
        "with the current secret, under the same event id (receivers deduplicate on "
        "it). Answers the event; the new attempt shows in `GET /events/{event_id}`.",
        before_request=reject_body_properties,
        summary="Send an event again, with the same event id",
        status_code=202,
        responses={202: ONE_EVENT},
    )
    async def redeliver_event(
        self, request: Request[Any, Any, Any], event_id: str
    ) -> Response[EventResponse]:
        container = container_of(request)
        principal = principal_of(request)

        def queue() -> EventResponse:
            tenant, org_id = principal.tenant, principal.org_id
            return EventResponse(redeliver_event(container, tenant, org_id, event_id))

        return await maybe_idempotent(request, queue, status_code=202)


async def _live_key_only(request: Request[Any, Any, Any]) -> None:
    refuse_sandbox_change(principal_of(request).environment)
    await request_rules(request)  # the router's hook, which this one replaces


async def _live_key_no_body(request: Request[Any, Any, Any]) -> None:
    refuse_sandbox_change(principal_of(request).environment)
    await reject_body_properties(request)


SANDBOX_KEYS_READ_ONLY = (
    " Live keys only: the one endpoint serves live and sandbox events alike, so a sandbox "
    "(`pk_test_`) key gets 403 `forbidden`; the operator CLI sets it too (`partner-api "
    "webhook set`)."
)


class WebhookEndpointController(Controller):
    path = "/webhook_endpoint"
    tags = ["events"]

    @get(
        operation_id="getWebhookEndpoint",
        description="The URL deliveries go to (null when none is set) and whether a signing "
        "secret is set; never the secret (it is shown once, when set or rotated).",
        summary="The organization's webhook URL",
        responses={200: ResponseDoc(EndpointResponse, description="The webhook endpoint")},
    )
    async def show(self, request: Request[Any, Any, Any]) -> EndpointResponse:
        service = endpoints_of(container_of(request))
        return EndpointResponse(service.describe(principal_of(request).org_id))

    @put(
        operation_id="setWebhookEndpoint",
        description="Sets or replaces the URL deliveries go to (https) and issues a new signing "
        "secret, shown in this answer only." + SANDBOX_KEYS_READ_ONLY,
        summary="Set the webhook URL; answers a new signing secret, shown only this once",
        before_request=_live_key_only,
        responses={200: NEW_SECRET},
    )
    async def set_url(
        self, request: Request[Any, Any, Any], data: SetWebhookEndpoint
    ) -> Response[EndpointSecretResponse]:
        service = endpoints_of(container_of(request))
        org_id = principal_of(request).org_id
        return await maybe_idempotent(
            request, lambda: EndpointSecretResponse(service.set_url(org_id, data)), 200, sealed=True
        )

    @post(
        "/rotate_secret",
        operation_id="rotateWebhookSecret",
        description="Replaces the `whsec_` secret that signs deliveries; the old one stops "
        "signing at once. The new secret is in this answer only: store it before "
        "verifying the next delivery." + SANDBOX_KEYS_READ_ONLY,
        before_request=_live_key_no_body,
        summary="Replace the signing secret; the new one is shown only this once",
        status_code=200,
        responses={200: NEW_SECRET},
    )
    async def rotate(self, request: Request[Any, Any, Any]) -> Response[EndpointSecretResponse]:
        service = endpoints_of(container_of(request))
        org_id = principal_of(request).org_id
        # A retry of a rotation whose answer was lost must not rotate again: the secret it
        # issued would be lost with it.
        return await maybe_idempotent(
            request, lambda: EndpointSecretResponse(service.rotate_secret(org_id)), 200, sealed=True
        )

    @post(
        "/test",
        operation_id="sendTestEvent",
        description="Records and delivers a test event to the webhook URL, signed like every "
        "other, so a receiver can be checked end to end. Answers the event (202): "
        "follow its attempts with `GET /events/{event_id}`.",
        before_request=reject_body_properties,
        summary=f"Send a `{TEST_EVENT_TYPE}` event to the webhook URL",
        status_code=202,
        responses={202: ONE_EVENT},
    )
    async def send_test(self, request: Request[Any, Any, Any]) -> Response[EventResponse]:
        container = container_of(request)
        principal = principal_of(request)
        return await maybe_idempotent(
            request, lambda: _send_test(container, principal), status_code=202
        )


def _send_test(container: Container, principal: Principal) -> EventResponse:
    """Records a test event and answers it as `GET /events/{id}` would show it."""
    position = endpoints_of(container).send_test(principal.org_id, principal.environment)
    container.read_models.wait_for(position)
    with container.read_db.read() as cur:
        row = cur.execute(
            "SELECT id FROM webhook_events WHERE position >= ? AND position < ? AND tenant = ?",
            (position * POSITION_STRIDE, (position + 1) * POSITION_STRIDE, principal.tenant),
        ).fetchone()
    times = sandbox_times(container, principal.tenant)
    found = None if row is None else one_event(
        container.read_db, principal.tenant, row["id"], times
    )
    if found is None:
        raise NotFound("event")
    return EventResponse(found)
