"""Bulk redelivery (decisions 7) through HTTP, the real NATS and a real receiver: after an
outage, `POST /events/redeliver` resends exactly the matching events, each once, same ids."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from conftest import RunningService, ServiceFactory, delete_nats_stream
from test_orders_sandbox import counts, error_of, new_workspace, place
from test_webhooks_delivery import ROLES, connect, event_when
from webhook_receiver import Receiver, wait_until

from infra.clock import iso
from webhooks.recovery import matching_events


@pytest.fixture
def webhooks(service_factory: ServiceFactory) -> Iterator[RunningService]:
    running = service_factory(
        roles=ROLES, allow_http_webhooks=True, webhook_retry_schedule=(0.2, 0.2, 0.2, 0.2)
    )
    yield running
    settings = running.container.settings
    assert settings.nats_url
    with contextlib.suppress(Exception):
        delete_nats_stream(settings)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    started = Receiver().start()
    yield started
    started.stop()


def send_test_event(partner: httpx.Client) -> str:
    sent = partner.post("/webhook_endpoint/test")
    assert sent.status_code == 202, sent.text
    return str(sent.json()["data"]["id"])


def attempts(partner: httpx.Client, event_id: str) -> int:
    return int(partner.get(f"/events/{event_id}").json()["data"]["attempt_count"])


def redeliver(partner: httpx.Client, body: dict[str, Any], key: str | None = None) -> httpx.Response:
    headers = {"Idempotency-Key": key} if key else {}
    return partner.post("/events/redeliver", json=body, headers=headers)


def failed_then_recovered(partner: httpx.Client, receiver: Receiver) -> dict[str, Any]:
    """Events before `since` and after it, failed while the receiver was down, and one
    delivered after it came back."""
    receiver.respond = lambda _: 500
    before = send_test_event(partner)
    event_when(partner, before, "failed")
    time.sleep(0.01)
    since = iso(time.time())
    down = [send_test_event(partner) for _ in range(3)]
    for event_id in down:
        event_when(partner, event_id, "failed")
    receiver.respond = lambda _: 200
    up = send_test_event(partner)
    event_when(partner, up, "delivered")
    return {"since": since, "before": before, "down": down, "up": up}


def test_failed_events_since_a_moment_are_sent_again_once_each(
    webhooks: RunningService, receiver: Receiver
) -> None:
    partner, _ = connect(webhooks, receiver)
    other, _ = connect(webhooks, receiver)  # another organization, down at the same time
    state = failed_then_recovered(partner, receiver)
    receiver.respond = lambda _: 500
    foreign = send_test_event(other)
    event_when(other, foreign, "failed")
    receiver.respond = lambda _: 200
    counts_before = {e: attempts(partner, e) for e in [state["before"], state["up"]]}

    answer = redeliver(partner, {"since": state["since"], "status": "failed"})
    assert answer.status_code == 202, answer.text
    assert answer.json() == {"data": {"redelivered": 3}}
    for event_id in state["down"]:
        done = event_when(partner, event_id, "delivered")
        assert done["attempt_count"] == 6 and done["attempts"][-1]["status_code"] == 200
        # The same event again, under its own id.
        assert receiver.of_event(event_id)[-1].event["id"] == event_id
    # Nothing else moved: not the event before `since`, not the delivered one, not another
    # organization's.
    time.sleep(0.5)
    assert {e: attempts(partner, e) for e in counts_before} == counts_before
    assert len(receiver.of_event(state["before"])) == 5
    assert len(receiver.of_event(state["up"])) == 1
    assert attempts(other, foreign) == 5 and len(receiver.of_event(foreign)) == 5


def test_one_new_attempt_each_and_every_status_when_omitted(
    webhooks: RunningService, receiver: Receiver
) -> None:
    partner, _ = connect(webhooks, receiver)
    state = failed_then_recovered(partner, receiver)
    receiver.respond = lambda _: 500  # still down: the new attempt fails, no new round of five
    answer = redeliver(partner, {"since": state["since"]})
    assert answer.json() == {"data": {"redelivered": 4}}, answer.text
    for event_id in state["down"]:
        wait_until(lambda e=event_id: attempts(partner, e) == 6)
        assert event_when(partner, event_id, "failed")["attempt_count"] == 6
    assert event_when(partner, state["up"], "failed")["attempt_count"] == 2
    time.sleep(0.6)  # three retry waits of the schedule: none is made
    assert [attempts(partner, e) for e in state["down"]] == [6, 6, 6]
    assert attempts(partner, state["before"]) == 5
    later = redeliver(partner, {"since": iso(time.time() + 60)})
    assert later.json() == {"data": {"redelivered": 0}}


def test_redelivery_honours_its_idempotency_key_and_the_full_preset(
    webhooks: RunningService, receiver: Receiver
) -> None:
    org = webhooks.new_org()
    with webhooks.client(webhooks.new_key(org)) as partner:
        assert webhooks.put_webhook(partner, receiver.url).status_code == 200
        event_id = send_test_event(partner)
        event_when(partner, event_id, "delivered")
        since = partner.get(f"/events/{event_id}").json()["data"]["created_at"]
        key = str(uuid.uuid4())
        first = redeliver(partner, {"since": since, "status": "delivered"}, key)
        assert first.json() == {"data": {"redelivered": 1}}, first.text
        wait_until(lambda: attempts(partner, event_id) == 2)
        again = redeliver(partner, {"since": since, "status": "delivered"}, key)
        assert again.headers["Idempotent-Replayed"] == "true"
        assert again.json() == first.json()
        other_body = redeliver(partner, {"since": since}, key)
        error_of(other_body, 409, "idempotency_conflict")
        time.sleep(0.3)
        assert attempts(partner, event_id) == 2
        # The one-event route beside it still answers its own event.
        single = partner.post(f"/events/{event_id}/redeliver")
        assert single.status_code == 202 and single.json()["data"]["id"] == event_id
    for preset in ("limited", "read"):
        with webhooks.client(webhooks.new_key(org, "test", preset)) as weaker:
            error_of(redeliver(weaker, {"since": since}), 403, "forbidden")


def test_redelivery_bodies_are_validated_with_their_field(webhooks: RunningService) -> None:
    with webhooks.partner() as partner:
        cases = {
            "since": [{}, {"since": "yesterday"}, {"since": "2026-07-01T00:00:00"},
                      {"since": 1751328000}],
            "status": [{"since": "2026-07-01T00:00:00Z", "status": "lost"}],
            "kind": [{"since": "2026-07-01T00:00:00Z", "kind": "failed"}],
        }
        for field, bodies in cases.items():
            for body in bodies:
                error = error_of(redeliver(partner, body), 400, "invalid_request")
                assert error["field"] == field, (body, error)
        accepted = redeliver(partner, {"since": "2026-07-01T02:00:00+02:00", "status": "pending"})
        assert accepted.json() == {"data": {"redelivered": 0}}, accepted.text


def failed_events(partner: httpx.Client) -> list[str]:
    answer = partner.get("/events", params={"per_page": 100, "status": "failed"})
    assert answer.status_code == 200, answer.text
    return [e["id"] for e in answer.json()["data"]]


def test_an_orders_events_are_queued_again_in_their_lifecycle_order(
    service_factory: ServiceFactory, receiver: Receiver
) -> None:
    """Oldest first, and of one moment in the order they were first sent: an order's
    completion after its domains' `domain.connected`, as the lifecycle reads. (The receiver
    may see them interleaved, the dispatcher making a few attempts at once; the queue is
    what this checks.)"""
    with_worker = service_factory(
        roles=[*ROLES, "worker"], allow_http_webhooks=True,
        webhook_retry_schedule=(0.2, 0.2, 0.2, 0.2),
    )
    org = with_worker.new_org()
    receiver.respond = lambda _: 500
    started = time.time()
    since = iso(started)
    with with_worker.client(with_worker.new_key(org)) as partner:
        assert with_worker.put_webhook(partner, receiver.url).status_code == 200
        assert place(partner, counts(new_workspace(partner), a=2)).status_code == 201
        wait_until(lambda: len(failed_events(partner)) == 4, interval=0.2)
        queued = matching_events(
            with_worker.container.read_db, f"{org}:test", started, "failed"
        )
        assert [row["type"] for row in queued] == [
            "order.in_progress", "domain.connected", "domain.connected", "order.completed"
        ]
        receiver.respond = lambda _: 200
        answer = redeliver(partner, {"since": since, "status": "failed"})
        assert answer.json() == {"data": {"redelivered": 4}}, answer.text
        wait_until(lambda: len(receiver.event_ids()) == 4 and not failed_events(partner))


@pytest.mark.parametrize("clock_moved", [False, True], ids=["real_clock", "sandbox_clock_moved"])
def test_a_bulk_redelivery_reaches_the_receiver_oldest_first(
    webhooks: RunningService, receiver: Receiver, clock_moved: bool
) -> None:
    """decisions 7: oldest first, at the receiver too, however slowly it answers; also in a
    sandbox whose clock was moved (its due attempts are made by the clock's own path)."""
    partner, _ = connect(webhooks, receiver)
    if clock_moved:
        moved = partner.post("/sandbox/clock/advance", json={"seconds": 60})
        assert moved.status_code == 200, moved.text
    since = iso(time.time())
    sent = [send_test_event(partner) for _ in range(12)]
    for event_id in sent:
        event_when(partner, event_id, "delivered")
    receiver.respond = lambda _: -0.05  # slow: side by side attempts would overtake each other
    assert redeliver(partner, {"since": since}).json()["data"]["redelivered"] == len(sent)
    wait_until(lambda: all(len(receiver.of_event(e)) == 2 for e in sent), timeout=60)
    again = sorted((r for e in sent for r in receiver.of_event(e)[1:]), key=lambda r: r.at)
    assert [r.headers["Service-Event-Id"] for r in again] == sent


def test_since_compares_with_the_envelope_to_the_millisecond(
    webhooks: RunningService, receiver: Receiver
) -> None:
    """An event whose envelope says `.305Z` is before a `since` of `.3058Z`."""
    partner, _ = connect(webhooks, receiver)
    event_id = send_test_event(partner)
    event_when(partner, event_id, "delivered")
    shown = partner.get(f"/events/{event_id}").json()["data"]["created_at"]  # ...ss.mmmZ
    finer = shown[:-1] + "9Z"  # a tenth of a millisecond before the next one
    assert redeliver(partner, {"since": finer}).json()["data"]["redelivered"] == 0
    assert redeliver(partner, {"since": shown}).json()["data"]["redelivered"] == 1
