"""Spec audit of webhook delivery: the letter of spec 6 checked from a receiver's side (headers,
signature as a partner verifies it, envelope, order event data) and the retry count under
any `PARTNER_API_WEBHOOK_RETRY_SCHEDULE` (decisions.md 1 calls it a timing knob)."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from conftest import RunningService, ServiceFactory, delete_nats_stream
from test_orders_sandbox import counts, new_workspace, place
from webhook_receiver import Received, Receiver, wait_until

from infra.settings import DEFAULT_RETRY_SCHEDULE, Settings
from webhooks.deliveries import attempts_allowed

ROLES = ["gateway", "projections", "publisher", "dispatcher", "worker"]
ISO_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")


def start(factory: ServiceFactory, schedule: tuple[float, ...]) -> RunningService:
    return factory(
        roles=ROLES,
        allow_http_webhooks=True,
        webhook_retry_schedule=schedule,
        webhook_timeout_seconds=1.0,
    )


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    started = Receiver().start()
    yield started
    started.stop()


@pytest.fixture
def stopped_streams() -> Iterator[list[RunningService]]:
    services: list[RunningService] = []
    yield services
    for running in services:
        with contextlib.suppress(Exception):  # leave no per-test stream on the machine's NATS
            delete_nats_stream(running.container.settings)


def connect(service: RunningService, receiver: Receiver) -> tuple[httpx.Client, str]:
    partner = service.partner()
    saved = service.put_webhook(partner, receiver.url)
    assert saved.status_code == 200, saved.text
    return partner, saved.json()["data"]["secret"]


def verified_as_spec_says(secret: str, got: Received) -> bool:
    """Spec 6 "Signature verification", steps 1 to 3, from the headers and the raw body."""
    timestamp = got.headers["Service-Timestamp"]
    event_id = got.headers["Service-Event-Id"]
    signed = f"{timestamp}.{event_id}.".encode() + got.body
    expected = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    scheme, _, value = got.headers["Service-Signature"].partition("=")
    return (
        scheme == "v1"
        and hmac.compare_digest(value, expected)
        and timestamp.isdigit()
        and abs(int(timestamp) - got.at) <= 300
    )


def test_any_schedule_length_makes_five_attempts() -> None:
    # Spec 6: up to 5 attempts; the knob sets the waits, a short list repeats its last wait.
    assert attempts_allowed(DEFAULT_RETRY_SCHEDULE) == 5
    assert attempts_allowed((1.0,)) == 5
    assert attempts_allowed((1.0, 2.0)) == 5
    assert attempts_allowed((1.0,) * 9) == 5
    assert schedule_from("1") == (1.0,)
    assert schedule_from("1, 2") == (1.0, 2.0)
    assert schedule_from(",") == DEFAULT_RETRY_SCHEDULE
    for unusable in ("inf", "nan", "1,-5"):  # a delivery would wait forever, or never
        with pytest.raises(ValueError):
            schedule_from(unusable)


def schedule_from(value: str) -> tuple[float, ...]:
    # Secrets given, so reading the settings writes nothing under ./var.
    env = {
        "PARTNER_API_WEBHOOK_RETRY_SCHEDULE": value,
        "PARTNER_API_SECRET_KEY": "audit",
        "PARTNER_API_OPERATOR_TOKEN": "op_audit",
    }
    return Settings.from_env(env).webhook_retry_schedule


def test_one_wait_schedule_still_fails_only_after_five_attempts(
    service_factory: ServiceFactory, receiver: Receiver, stopped_streams: list[RunningService]
) -> None:
    service = start(service_factory, (0.2,))
    stopped_streams.append(service)
    receiver.respond = lambda _: 500
    partner, secret = connect(service, receiver)
    event_id = partner.post("/webhook_endpoint/test").json()["data"]["id"]

    def failed() -> dict[str, Any] | None:
        event: dict[str, Any] = partner.get(f"/events/{event_id}").json()["data"]
        return event if event["status"] == "failed" else None

    event = wait_until(failed, timeout=30)
    assert event["attempt_count"] == 5 and len(event["attempts"]) == 5
    assert [a["number"] for a in event["attempts"]] == [1, 2, 3, 4, 5]
    assert all(not a["succeeded"] and ISO_UTC.match(a["attempted_at"]) for a in event["attempts"])
    got = receiver.of_event(event_id)
    assert len(got) == 5 and all(verified_as_spec_says(secret, r) for r in got)


def test_order_events_carry_the_spec_headers_envelope_and_data(
    service_factory: ServiceFactory, receiver: Receiver, stopped_streams: list[RunningService]
) -> None:
    service = start(service_factory, (0.2, 0.2, 0.2, 0.2))
    stopped_streams.append(service)
    partner, secret = connect(service, receiver)
    placed = place(partner, counts(new_workspace(partner), a=1))
    assert placed.status_code == 201, placed.text
    order_id = placed.json()["data"]["id"]

    def both() -> dict[str, Received] | None:
        by_type = {r.event["type"]: r for r in list(receiver.received)}
        wanted = ("order.in_progress", "order.completed")
        return by_type if all(t in by_type for t in wanted) else None

    by_type = wait_until(both, timeout=30)
    for got in by_type.values():
        assert verified_as_spec_says(secret, got)
        assert re.fullmatch(r"evt_\w+", got.headers["Service-Event-Id"])
        assert set(got.event) == {"id", "type", "created_at", "data"}
        assert got.event["id"] == got.headers["Service-Event-Id"]
        assert ISO_UTC.match(got.event["created_at"])
    started = by_type["order.in_progress"].event["data"]
    order = partner.get(f"/orders/{order_id}").json()["data"]
    assert started == {"id": order_id, "status": "in_progress", "destination": order["destination"]}
    assert by_type["order.completed"].event["data"] == order
