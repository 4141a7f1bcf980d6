"""`webhook.test`: the test event a partner asks for, to check the receiver end to end."""

from __future__ import annotations

from typing import Any

from domain.organizations import Organization
from infra.ids import public_id
from infra.store import EventStore
from webhooks.public_events import PublicEvent, maps

TEST_EVENT_TYPE = "webhook.test"


@maps(Organization.WebhookTestRequested)
def webhook_test(event: Any, store: EventStore) -> list[PublicEvent]:
    org_id = public_id("org", event.originator_id)
    return [
        PublicEvent(
            type=TEST_EVENT_TYPE,
            org_id=org_id,
            environment=event.environment,
            resource_id=org_id,
            data={
                "id": org_id,
                "status": "test",
                "message": "A test event sent on request; no resource changed.",
            },
            created_at=event.requested_at,
        )
    ]
