"""Signed at-least-once delivery through the real NATS to a real HTTP receiver on loopback."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from conftest import RunningService, ServiceFactory, delete_nats_stream
from test_orders_sandbox import counts, new_workspace, place
from webhook_receiver import Received, Receiver, wait_until

from webhooks.endpoints import endpoints_of

ROLES = ["gateway", "projections", "publisher", "dispatcher"]


@pytest.fixture
def webhooks(service_factory: ServiceFactory) -> Iterator[RunningService]:
    running = service_factory(
        roles=ROLES,
        allow_http_webhooks=True,
        webhook_retry_schedule=(0.2, 0.2, 0.2, 0.2),
        webhook_timeout_seconds=1.0,
    )
    yield running
    settings = running.container.settings
    assert settings.nats_url
    # The machine's NATS outlives the test: leave no per-test stream behind.
    with contextlib.suppress(Exception):
        delete_nats_stream(settings)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    started = Receiver().start()
    yield started
    started.stop()


def connect(service: RunningService, receiver: Receiver) -> tuple[httpx.Client, str]:
    partner = service.partner()
    saved = service.put_webhook(partner, receiver.url)
    assert saved.status_code == 200, saved.text
    return partner, saved.json()["data"]["secret"]


def event_when(partner: httpx.Client, event_id: str, status: str) -> dict[str, Any]:
    def check() -> dict[str, Any] | None:
        event: dict[str, Any] = partner.get(f"/events/{event_id}").json()["data"]
        return event if event["status"] == status else None

    found: dict[str, Any] = wait_until(check, timeout=30)
    return found


def independently_verified(secret: str, received: Received) -> bool:
    timestamp = received.headers["Service-Timestamp"]
    event_id = received.headers["Service-Event-Id"]
    expected = hmac.new(
        secret.encode(), f"{timestamp}.{event_id}.".encode() + received.body, hashlib.sha256
    ).hexdigest()
    return received.headers["Service-Signature"] == f"v1={expected}"


def test_test_event_is_delivered_signed(webhooks: RunningService, receiver: Receiver) -> None:
    partner, secret = connect(webhooks, receiver)
    event = partner.post("/webhook_endpoint/test").json()["data"]
    delivered = event_when(partner, event["id"], "delivered")
    # At least once: under heavy load a slow answer may time out and be sent again.
    got = receiver.of_event(event["id"])[-1]
    assert independently_verified(secret, got)
    assert abs(int(got.headers["Service-Timestamp"]) - got.at) < 5
    assert set(got.event) == {"id", "type", "created_at", "data"}
    assert got.event["id"] == event["id"] and got.event["type"] == "webhook.test"
    assert got.event["created_at"].endswith("Z")
    assert [a["status_code"] for a in delivered["attempts"]][-1] == 200
    assert delivered["attempts"][-1]["succeeded"] is True
    listed = partner.get("/events", params={"status": "delivered"}).json()["data"]
    assert [e["id"] for e in listed] == [event["id"]]


def test_retries_on_500_keep_the_event_id(webhooks: RunningService, receiver: Receiver) -> None:
    receiver.respond = lambda got: 500 if len(got) <= 2 else 200
    partner, secret = connect(webhooks, receiver)
    event = partner.post("/webhook_endpoint/test").json()["data"]
    delivered = event_when(partner, event["id"], "delivered")
    # Under heavy load an attempt may time out (no status) before the receiver's 500 arrives.
    codes = [a["status_code"] for a in delivered["attempts"]]
    assert codes[-1] == 200 and codes.count(200) == 1 and set(codes[:-1]) <= {500, None}
    assert len(codes) >= 3 and delivered["attempts"][-1]["error"] is None
    assert all(a["error"] == "HTTP 500" for a in delivered["attempts"] if a["status_code"] == 500)
    got = receiver.of_event(event["id"])
    assert len(got) >= 3 and len({r.body for r in got}) == 1
    assert all(independently_verified(secret, r) for r in got)
    metrics = httpx.get(f"{webhooks.base_url}/metrics", timeout=10).text
    assert f'partner_api_webhook_attempts_total{{outcome="failure"}} {len(codes) - 1}.0' in metrics
    assert 'partner_api_webhook_attempts_total{outcome="success"} 1.0' in metrics


def first_attempt_of_its_event(got: list[Received]) -> bool:
    event_id = got[-1].headers.get("Service-Event-Id")
    return sum(1 for r in got if r.headers.get("Service-Event-Id") == event_id) == 1


def test_receiver_hanging_past_the_timeout_is_retried(
    webhooks: RunningService, receiver: Receiver
) -> None:
    # Hang on the first attempt of each event: the receiver may see other events before ours.
    receiver.respond = lambda got: -1.5 if first_attempt_of_its_event(got) else 200
    partner, _ = connect(webhooks, receiver)
    event = partner.post("/webhook_endpoint/test").json()["data"]
    delivered = event_when(partner, event["id"], "delivered")
    # Under heavy load a later attempt may time out too: only the first and last are known.
    first, *_, last = delivered["attempts"]
    assert first["status_code"] is None and "timed out" in first["error"]
    assert 900 <= first["duration_ms"] < 3000
    assert last["status_code"] == 200


def test_failed_after_five_attempts_then_redelivered(
    webhooks: RunningService, receiver: Receiver
) -> None:
    receiver.respond = lambda got: 503
    partner, secret = connect(webhooks, receiver)
    event = partner.post("/webhook_endpoint/test").json()["data"]
    failed = event_when(partner, event["id"], "failed")
    # Five failed attempts; under heavy load one may time out (no status) instead of seeing 503.
    codes = [a["status_code"] for a in failed["attempts"]]
    assert len(codes) == 5 and set(codes) <= {503, None} and codes.count(503) >= 4
    assert partner.get("/events", params={"status": "failed"}).json()["data"][0]["id"] == event["id"]

    receiver.respond = lambda got: 200
    answer = partner.post(f"/events/{event['id']}/redeliver")
    assert answer.status_code == 202 and answer.json()["data"]["status"] == "pending"
    delivered = event_when(partner, event["id"], "delivered")
    assert len(delivered["attempts"]) == 6
    got = receiver.of_event(event["id"])
    # An attempt that timed out under load may never have reached the receiver.
    answered = sum(1 for a in delivered["attempts"] if a["status_code"] is not None)
    assert answered <= len(got) <= 6 and {r.event["id"] for r in got} == {event["id"]}
    assert independently_verified(secret, got[-1])


def test_rotated_secret_signs_the_next_delivery(
    webhooks: RunningService, receiver: Receiver
) -> None:
    partner, old = connect(webhooks, receiver)
    first = partner.post("/webhook_endpoint/test").json()["data"]["id"]
    event_when(partner, first, "delivered")
    new = webhooks.live_twin(partner).post("/webhook_endpoint/rotate_secret").json()["data"]["secret"]
    second = partner.post("/webhook_endpoint/test").json()["data"]["id"]
    event_when(partner, second, "delivered")
    got = receiver.of_event(second)[-1]
    assert independently_verified(new, got) and not independently_verified(old, got)


def test_a_slow_organization_does_not_delay_another(
    webhooks: RunningService, receiver: Receiver
) -> None:
    slow_receiver = Receiver(respond=lambda got: -3.0).start()
    try:
        slow, _ = connect(webhooks, slow_receiver)
        slow_org = slow.get("/me").json()["data"]["partner"]["id"]
        for _ in range(60):
            endpoints_of(webhooks.container).send_test(slow_org, "test")
        wait_until(lambda: len(slow_receiver.received) >= 1)
        fast, _ = connect(webhooks, receiver)
        started = time.monotonic()
        event = fast.post("/webhook_endpoint/test").json()["data"]
        wait_until(lambda: receiver.of_event(event["id"]), timeout=5)
        slow_reached = len(slow_receiver.event_ids())
        # The slow org's receiver times out (1 s) on each of 60 events, 8 at a time: its first
        # attempts alone take 7.5 s, and the other organization is not behind them.
        assert time.monotonic() - started < 5.0
        assert slow_reached < 60
    finally:
        slow_receiver.stop()


def test_a_gateway_of_its_own_reports_attempts_and_backlog(
    webhooks: RunningService, receiver: Receiver, service_factory: ServiceFactory
) -> None:
    """decisions 1 metrics with each role its own process: the dispatcher and the publisher
    serve no HTTP, so a gateway reports their figures from what they stored."""
    partner, _ = connect(webhooks, receiver)
    event = partner.post("/webhook_endpoint/test").json()["data"]
    event_when(partner, event["id"], "delivered")
    gateway = service_factory(roles=["gateway"], nats_url=webhooks.container.settings.nats_url)

    def figures() -> dict[str, float] | None:
        text = httpx.get(f"{gateway.base_url}/metrics", timeout=10).text
        values = {
            line.split(" ")[0]: float(line.split(" ")[1])
            for line in text.splitlines()
            if line.startswith(("partner_api_webhook_attempts_total", "partner_api_outbox_backlog"))
        }
        backlog = values.get("partner_api_outbox_backlog_events")
        return values if backlog == 0 else None

    values = wait_until(figures, timeout=30)
    assert values['partner_api_webhook_attempts_total{outcome="success"}'] >= 1
    assert values['partner_api_webhook_attempts_total{outcome="failure"}'] == 0


def test_an_envelope_larger_than_a_nats_message_is_delivered_and_holds_nothing_back(
    service_factory: ServiceFactory, receiver: Receiver
) -> None:
    """The completion of an order at the documented maxima is an envelope of about 1.7 MB,
    above NATS's 1 MB message limit: it reaches the receiver whole, signed, and the events
    after it (another organization's) are not held back behind it."""
    webhooks = service_factory(roles=[*ROLES, "worker"], allow_http_webhooks=True)
    try:
        big, secret = connect(webhooks, receiver)
        body = counts(new_workspace(big), a=0)
        body["suite_a"] = {"domains": 100, "inboxes_per_domain": 50}
        body["suite_b"] = {"domains": 100, "inboxes_per_domain": 50}
        order = place(big, body)
        assert order.status_code == 201, order.text
        other, _ = connect(webhooks, receiver)
        after = other.post("/webhook_endpoint/test").json()["data"]
        wait_until(lambda: receiver.of_event(after["id"]), timeout=30)

        def completed() -> list[Received] | None:
            got = [r for r in receiver.received if r.event["type"] == "order.completed"]
            return got or None

        (delivered,) = wait_until(completed, timeout=120)
        assert len(delivered.body) > 1_048_576
        assert independently_verified(secret, delivered)
        assert delivered.event["data"]["id"] == order.json()["data"]["id"]
        assert len(delivered.event["data"]["domains"]) == 200
        ready = httpx.get(webhooks.base_url + "/readyz")
        assert ready.status_code == 200, ready.text
    finally:
        with contextlib.suppress(Exception):
            delete_nats_stream(webhooks.container.settings)


def test_a_completion_reaches_the_receiver_after_its_parts(
    service_factory: ServiceFactory,
) -> None:
    """`order.completed` says every domain is live: it goes out once the first attempts of
    its `domain.connected` events ended, even where those take their time."""
    service = service_factory(roles=[*ROLES, "worker"], allow_http_webhooks=True)
    slow_parts = Receiver(
        respond=lambda got: -0.6 if b'"domain.connected"' in got[-1].body else 200
    ).start()
    try:
        partner, _ = connect(service, slow_parts)
        order = place(partner, counts(new_workspace(partner), a=3)).json()["data"]

        def completed() -> list[Received] | None:
            got = [r for r in slow_parts.received if order["id"] in r.body.decode()]
            done = [r for r in got if r.event["type"] == "order.completed"]
            return got if done else None

        got = wait_until(completed, timeout=30)
        parts = [r for r in got if r.event["type"] == "domain.connected"]
        (done,) = [r for r in got if r.event["type"] == "order.completed"]
        assert len(parts) == 3
        assert done.at >= max(r.at for r in parts) + 0.5, [(r.event["type"], r.at) for r in got]
    finally:
        slow_parts.stop()
        with contextlib.suppress(Exception):
            delete_nats_stream(service.container.settings)
