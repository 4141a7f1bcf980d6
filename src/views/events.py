"""How the webhook event log and the organization's endpoint look in answers (spec 6): the
events API and the portal read them through `webhooks/events_view.py` and
`webhooks/endpoints.py`, which build these."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from schema.event_types import EVENT_TYPES
from schema.rules import documented
from views.pages import Links, Meta

# Too many to spell twice: the catalog's tuple (constants only) is the list.
EventType = Annotated[str, documented(enum=list(EVENT_TYPES))]
DeliveryStatus = Literal["pending", "delivered", "failed"]


class Attempt(msgspec.Struct):
    """One delivery attempt; `status_code` is null when no HTTP answer came back."""

    number: int
    attempted_at: str
    status_code: int | None
    error: str | None
    duration_ms: float
    succeeded: bool


class EventOut(msgspec.Struct):
    """A webhook event (`evt_`) with its delivery state; `data` is the event's payload, whose
    shape depends on `type` (spec 6)."""

    id: str
    type: EventType
    created_at: str
    resource_id: str
    data: dict[str, Any]
    status: DeliveryStatus
    attempt_count: int
    next_attempt_at: str | None  # only while pending
    delivered_at: str | None
    attempts: list[Attempt]


class EventResponse(msgspec.Struct):
    data: EventOut


class EventPage(msgspec.Struct):
    data: list[EventOut]
    links: Links
    meta: Meta


class RedeliveredOut(msgspec.Struct):
    redelivered: int


class RedeliveredResponse(msgspec.Struct):
    data: RedeliveredOut


class EndpointOut(msgspec.Struct):
    url: str | None  # null until a URL is set
    secret_set: bool


class EndpointResponse(msgspec.Struct):
    data: EndpointOut


class EndpointSecretOut(msgspec.Struct):
    """The signing secret (`whsec_`), shown in this answer only."""

    url: str
    secret: str


class EndpointSecretResponse(msgspec.Struct):
    data: EndpointSecretOut
