"""The JetStream message between the outbox publisher (`outbox.message_of`) and the
dispatcher, as the dispatcher reads it."""

from __future__ import annotations

import json

from webhooks.deliveries import Due
from webhooks.stream import AFTER_PARTS_HEADER, CHANGE_HEADER, ENVIRONMENT_HEADER, ORG_HEADER


def due_of(data: bytes, headers: dict[str, str] | None) -> Due:
    """The delivery a message asks for. Its body is the envelope as delivered; a message of an
    earlier version (still in the stream after an upgrade) wraps it in JSON with the org."""
    if headers and ORG_HEADER in headers:
        org_id = headers[ORG_HEADER]
        tenant = f"{org_id}:{headers[ENVIRONMENT_HEADER]}"
        named = headers.get(AFTER_PARTS_HEADER, "")
        return Due(headers["Nats-Msg-Id"], org_id, data.decode(), tenant=tenant,
                   change=headers.get(CHANGE_HEADER, ""),
                   after_parts=AFTER_PARTS_HEADER in headers,
                   # "1": the parts are not named (too many, or a publisher before they were)
                   parts=tuple(part for part in named.split(",") if part.startswith("evt_")))
    body = json.loads(data)
    envelope = body["envelope"]
    payload = json.dumps(envelope, separators=(",", ":"))
    tenant = f"{body['org_id']}:{body['environment']}"
    return Due(envelope["id"], body["org_id"], payload, tenant=tenant)
