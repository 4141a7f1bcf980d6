"""Out-of-order and repeated arrival, tolerated by the README's advice: a receiver that verifies,
dedupes on `Service-Event-Id` and decides from `data.status` (with `created_at`) ends in the
order's real state, whatever order and however often the deliveries come."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from conftest import RunningService, ServiceFactory, delete_nats_stream
from test_orders_sandbox import counts, new_workspace, placed, wait_order
from webhook_receiver import Received, Receiver, wait_until

from webhooks.signing import verify_signature

ROLES = ["gateway", "projections", "publisher", "dispatcher", "worker"]
# Equal `created_at` (one request may move an order twice in a millisecond): the later step wins.
LIFECYCLE = ["in_progress", "action_required", "completed", "cancel_scheduled", "failed", "cancelled"]


@dataclass
class AdvisedReceiver:
    """The README's receiver, as a partner would write it."""

    secret: str
    seen: set[str] = field(default_factory=set)
    orders: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (created_at, status)
    applied: list[tuple[str, str]] = field(default_factory=list)  # (event type, status) accepted
    # Answered 500 until the order's cancellation is applied: one earlier event comes late.
    held_back: str | None = None

    def handle(self, got: Received) -> int:
        if not verify_signature(self.secret, got.headers, got.body, time.time()):
            return 400
        event_id = got.headers["Service-Event-Id"]
        if event_id in self.seen:
            return 200  # a repeat: acknowledged, nothing applied again
        event = got.event
        if self.held_back in (None, event_id) and event["type"] == "order.in_progress":
            self.held_back = event_id
            if "cancel_scheduled" not in {status for _, status in self.applied}:
                return 500  # not processed, so not marked seen: the retry must be applied
        self.seen.add(event_id)
        if event["type"].startswith("order."):
            self._apply(event["data"]["id"], event["created_at"], event["data"]["status"])
            self.applied.append((event["type"], event["data"]["status"]))
        return 200

    def _apply(self, order_id: str, created_at: str, status: str) -> None:
        held = self.orders.get(order_id)
        newer = held is None or (created_at, LIFECYCLE.index(status)) > (
            held[0],
            LIFECYCLE.index(held[1]),
        )
        if newer:  # ISO 8601 UTC strings of one format compare as times
            self.orders[order_id] = (created_at, status)


@pytest.fixture
def webhooks(service_factory: ServiceFactory) -> Iterator[RunningService]:
    # Growing waits: the held-back event must not use up its five attempts (and end `failed`)
    # before a loaded machine has delivered the later events.
    running = service_factory(
        roles=ROLES, allow_http_webhooks=True, webhook_retry_schedule=(1.0, 2.0, 4.0, 8.0)
    )
    yield running
    settings = running.container.settings
    assert settings.nats_url
    with contextlib.suppress(Exception):
        delete_nats_stream(settings)


def order_events(partner: httpx.Client) -> list[dict[str, Any]]:
    listed = partner.get("/events", params={"per_page": 100}).json()["data"]
    return [e for e in listed if e["type"].startswith("order.")]


def all_delivered(partner: httpx.Client, expected: int) -> list[dict[str, Any]] | None:
    events = order_events(partner)
    done = len(events) == expected and all(e["status"] == "delivered" for e in events)
    return events if done else None


def test_reordered_and_repeated_deliveries_end_in_the_right_state(
    webhooks: RunningService,
) -> None:
    receiver = Receiver().start()
    try:
        partner = webhooks.partner()
        saved = webhooks.put_webhook(partner, receiver.url)
        assert saved.status_code == 200, saved.text
        advised = AdvisedReceiver(saved.json()["data"]["secret"])
        receiver.respond = lambda got: advised.handle(got[-1])

        # in_progress, action_required; then in_progress, completed; then cancel_scheduled. The
        # first in_progress fails once and its retry lands after the later events.
        body = counts(new_workspace(partner), a=1, profile_picture_url="http://10.0.0.5/me.png")
        order = placed(partner, body)
        assert order["status"] == "action_required"
        wait_until(lambda: advised.held_back, timeout=30)  # the first in_progress was refused
        (pending,) = partner.get("/orders/pending", params={"order_id": order["id"]}).json()["data"]
        resolved = partner.post(
            f"/orders/pending/{pending['id']}/resolve",
            json={"profile_picture_url": "https://cdn.example.com/a.png"},
        )
        assert resolved.json()["data"]["order"]["status"] == "in_progress", resolved.text
        assert wait_order(partner, order["id"])["status"] == "completed"
        assert partner.post(f"/orders/{order['id']}/cancel").status_code == 200
        events = wait_until(lambda: all_delivered(partner, 5), timeout=30)
        truth = partner.get(f"/orders/{order['id']}").json()["data"]["status"]
        assert truth == "cancel_scheduled"
        assert advised.orders[order["id"]][1] == truth
        first_in_progress = events[-1]  # the list is newest first
        assert first_in_progress["type"] == "order.in_progress"
        codes = [a["status_code"] for a in first_in_progress["attempts"]]
        assert first_in_progress["id"] == advised.held_back and codes[0] == 500 and codes[-1] == 200
        # Arrival order was not log order: the late retry was applied after a later status.
        assert advised.applied[-1] == ("order.in_progress", "in_progress")

        # Every event again, newest first, then two of them a second time: reverse order and
        # duplicates. The receiver acknowledges each and stays where it is.
        for event in [*events, events[0], events[-1]]:
            before = len(receiver.of_event(event["id"]))
            answer = partner.post(f"/events/{event['id']}/redeliver")
            assert answer.status_code == 202, answer.text
            wait_until(lambda e=event, n=before: len(receiver.of_event(e["id"])) > n, timeout=30)
        assert advised.orders[order["id"]][1] == truth
        assert len(advised.applied) == 5  # each logical event applied once
        assert len({r.headers["Service-Event-Id"] for r in receiver.received}) >= 5
    finally:
        receiver.stop()
