"""What a partner asks of its webhooks (the events API, the portal, the CLI, AdminService), as
the gateway decodes it."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec

from schema.rules import HttpsUrl
from views.events import DeliveryStatus


class SetWebhookEndpoint(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """The URL deliveries go to (https); a new signing secret comes with it."""

    url: HttpsUrl


class RedeliverEvents(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Every event since a moment again (recovery after an outage)."""

    since: Annotated[
        datetime,
        msgspec.Meta(
            tz=True,
            description="ISO 8601 with its offset (`2026-07-01T00:00:00Z`): events whose "
            "`created_at` is at or after it are sent again.",
        ),
    ]
    status: Annotated[
        DeliveryStatus | None,
        msgspec.Meta(description="Only events in this delivery status; omitted: every one."),
    ] = None
