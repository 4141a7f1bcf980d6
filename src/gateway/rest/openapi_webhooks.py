"""The OpenAPI 3.1 `webhooks` section: what the dispatcher POSTs to a partner's URL, one entry
per event type of the catalog (spec 6), with the envelope, the signing headers and the answer
a receiver gives."""

from __future__ import annotations

from typing import Any

from schema.event_types import EVENT_TYPES

# What `data` carries, by the type's family (README "Webhooks" has the details).
_DATA = {
    "order.in_progress": "`id`, `status`, `destination`",
    "order.completed": "the full provisioned order, as `GET /orders/{id}` shows it",
    "order": "`id`, `status`, `destination` and what changed (`cancel_at`, "
    "`released_domains`, `dropped_domains`, `refunded_cents`, `reason`, `pending_action_id`)",
    "forwarding": "`id` (`dom_`), `domain`, `forwarding_url`, `job_id` (or `order_id`), "
    "`status` (the domain's), `forwarding_status`, `reason` on failure",
    "domain": "the domain, with `status`",
    "domain.action_required": "the domain, with `status` and `reason`; a live yearly renewal "
    "the wallet could not cover: `id`, `domain`, `status`, `reason` `renewal_payment_failed`, "
    "`auto_renew`, `renewal_price_cents`, `retry_at` (tried again daily; unpaid 30 days after "
    "its anniversary, the domain lapses)",
    "domain_import": "the import job, as `GET /domains/import/jobs/{id}` shows it",
    "swap": "the swap, as `GET /swaps/{id}` shows it",
    "pool": "the pool domain, reservation, release or replacement, with `status`",
    "webhook": "a test event: `message`",
}
ENVELOPE: dict[str, Any] = {
    "type": "object",
    "required": ["id", "type", "created_at", "data"],
    "properties": {
        "id": {"type": "string", "pattern": "^evt_", "description": "Same as Service-Event-Id"},
        "type": {"type": "string", "enum": list(EVENT_TYPES)},
        "created_at": {"type": "string", "format": "date-time"},
        "data": {"type": "object", "description": "Shape by `type`; decide from `data.status`"},
    },
}
_HEADERS = [
    ("Service-Event-Id", "Stable per logical event (`evt_...`): dedupe on it for 24 h or more"),
    ("Service-Timestamp", "Unix seconds when the body was signed; refuse beyond 5 minutes"),
    (
        "Service-Signature",
        "`v1=` + hex HMAC-SHA-256 of `<timestamp>.<event id>.<raw body>` "
        "with the endpoint's `whsec_` secret; compare in constant time",
    ),
]


def _data_of(event_type: str) -> str:
    family = event_type.split(".", 1)[0]
    if event_type in ("domain.forwarding_updated", "domain.forwarding_failed"):
        family = "forwarding"
    return _DATA.get(event_type) or _DATA[family]


def webhooks_section() -> dict[str, Any]:
    return {
        event_type: {
            "post": {
                "summary": event_type,
                "tags": ["webhooks"],
                "description": f"`data`: {_data_of(event_type)}. Delivered at least once, "
                "possibly out of order; up to 5 attempts over 24 hours.",
                "operationId": f"webhook_{event_type.replace('.', '_')}",
                "parameters": [
                    {
                        "name": name,
                        "in": "header",
                        "required": True,
                        "schema": {"type": "string"},
                        "description": text,
                    }
                    for name, text in _HEADERS
                ],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {"$ref": "#/components/schemas/WebhookEvent"}
                        }
                    },
                },
                "responses": {
                    "2XX": {"description": "Received; any 2xx within 15 seconds"},
                    "default": {"description": "Failed: retried with exponential backoff"},
                },
            }
        }
        for event_type in EVENT_TYPES
    }
