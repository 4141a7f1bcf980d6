"""The JetStream message between the outbox publisher and the dispatcher."""

from __future__ import annotations

import json
from dataclasses import replace

from webhooks.event_log import envelope_of
from webhooks.messages import due_of
from webhooks.outbox import message_of
from webhooks.public_events import PublicEvent

EVENT = PublicEvent(
    type="order.completed",
    org_id="org_1",
    environment="test",
    resource_id="ord_1",
    data={"id": "ord_1", "name": "Café Ünïcode"},
    created_at=1_800_000_000.0,
    id="evt_1",
    change="a1b2:3",
)


def test_the_body_is_the_envelope_as_delivered_and_headers_say_whom_for() -> None:
    body, headers = message_of(EVENT)
    assert json.loads(body) == envelope_of(EVENT)
    assert headers["Nats-Msg-Id"] == "evt_1"
    due = due_of(body, headers)
    assert (due.event_id, due.org_id, due.tenant) == ("evt_1", "org_1", "org_1:test")
    # Signed and posted byte for byte as it came: the same text GET /events shows.
    assert due.payload == json.dumps(envelope_of(EVENT), separators=(",", ":"))
    # A completion goes after the other events of its change.
    assert (due.change, due.after_parts) == ("a1b2:3", True)
    part = due_of(*message_of(replace(EVENT, type="domain.connected", id="evt_2")))
    assert (part.change, part.after_parts) == ("a1b2:3", False)


def test_a_message_of_the_earlier_format_is_still_delivered() -> None:
    # Written by a publisher before the upgrade, still in the stream after it.
    old = json.dumps({"envelope": envelope_of(EVENT), "org_id": "org_1",
                      "environment": "test", "resource_id": "ord_1"}).encode()
    due = due_of(old, {"Nats-Msg-Id": "evt_1"})
    assert (due.event_id, due.org_id, due.tenant) == ("evt_1", "org_1", "org_1:test")
    assert due.payload == json.dumps(envelope_of(EVENT), separators=(",", ":"))
    assert due_of(old, None).payload == due.payload
