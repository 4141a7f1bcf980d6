"""Pending webhook retries of a sandbox run on its clock (decisions.md 6): each advance makes
one attempt of each delivery due; a failing receiver sees its five attempts, then `failed`."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from conftest import RunningService, ServiceFactory, delete_nats_stream
from sandbox_clock_support import advance
from webhook_receiver import Receiver, wait_until

from infra.clock import ManualClock
from webhooks.deliveries import claim_due_of_tenant

ROLES = ["gateway", "projections", "publisher", "dispatcher", "worker", "swaps"]
DAY = 86_400
SCHEDULE = (60.0, 600.0, 6000.0, 60000.0)


@pytest.fixture
def webhooks(service_factory: ServiceFactory) -> Iterator[RunningService]:
    running = service_factory(
        clock=ManualClock(),
        roles=ROLES,
        allow_http_webhooks=True,
        webhook_retry_schedule=SCHEDULE,
        webhook_timeout_seconds=2.0,
    )
    yield running
    with contextlib.suppress(Exception):
        delete_nats_stream(running.container.settings)


@pytest.fixture
def failing() -> Iterator[Receiver]:
    started = Receiver(respond=lambda _: 503).start()
    yield started
    started.stop()


def _test_event_after_first_attempt(partner: httpx.Client) -> dict[str, Any]:
    event = partner.post("/webhook_endpoint/test").json()["data"]

    def attempted() -> dict[str, Any] | None:
        found: dict[str, Any] = partner.get(f"/events/{event['id']}").json()["data"]
        return found if len(found["attempts"]) == 1 else None

    found: dict[str, Any] = wait_until(attempted)
    return found


def _attempts(partner: httpx.Client, event_id: str) -> dict[str, Any]:
    found: dict[str, Any] = partner.get(f"/events/{event_id}").json()["data"]
    return found


def test_each_advance_past_a_retry_makes_one_attempt(
    webhooks: RunningService, failing: Receiver
) -> None:
    with webhooks.partner() as partner:
        assert webhooks.put_webhook(partner, failing.url).status_code == 200
        event = _test_event_after_first_attempt(partner)
        assert advance(partner, seconds=59)["came_due"]["webhook_attempts"] == 0
        for number, wait in enumerate(SCHEDULE, start=2):
            # One advance far past every retry still makes one attempt only.
            moved = advance(partner, seconds=int(wait) * (3 if number == 3 else 1))
            assert moved["came_due"]["webhook_attempts"] == 1, number
            found = _attempts(partner, event["id"])
            assert len(found["attempts"]) == number
            assert found["attempts"][-1]["attempted_at"] == moved["now"]
        assert found["status"] == "failed"
        assert advance(partner, seconds=31_622_400)["came_due"]["webhook_attempts"] == 0
        received = failing.of_event(event["id"])
        assert len(received) == 5
        # Receivers' checks hold: the signature's timestamp and the envelope stay on real time.
        real_now = webhooks.container.clock.real_now()
        assert {r.headers["Service-Timestamp"] for r in received} == {str(int(real_now))}
        assert received[-1].event["created_at"] < found["attempts"][1]["attempted_at"]


def test_two_advances_at_once_attempt_a_delivery_once(
    webhooks: RunningService, failing: Receiver
) -> None:
    with webhooks.partner() as partner:
        assert webhooks.put_webhook(partner, failing.url).status_code == 200
        event = _test_event_after_first_attempt(partner)
        answers: list[dict[str, Any]] = []

        def move() -> None:
            answers.append(advance(partner, seconds=120))

        threads = [threading.Thread(target=move) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sum(a["came_due"]["webhook_attempts"] for a in answers) == 1
        assert len(_attempts(partner, event["id"])["attempts"]) == 2
        assert len(failing.of_event(event["id"])) == 2


def test_a_live_delivery_keeps_real_time(webhooks: RunningService, failing: Receiver) -> None:
    org = webhooks.new_org()
    with webhooks.client(webhooks.new_key(org, "live")) as live, webhooks.client(
        webhooks.new_key(org)
    ) as sandbox:
        assert live.put("/webhook_endpoint", json={"url": failing.url}).status_code == 200
        event = _test_event_after_first_attempt(live)
        assert advance(sandbox, seconds=100_000)["came_due"]["webhook_attempts"] == 0
        assert len(_attempts(live, event["id"])["attempts"]) == 1


def test_an_advance_signs_each_attempt_when_it_sends_it(webhooks: RunningService) -> None:
    """An advance posts its due attempts one after another: each is signed at its own
    sending, so a receiver's five-minute check holds however long the ones before it took,
    and each delivery gets one attempt (the dispatcher never takes one still waiting)."""
    clock = webhooks.container.clock.base  # type: ignore[attr-defined]

    slow = threading.Event()

    def slow_and_failing(_: list[Any]) -> float:
        if slow.is_set():
            clock.advance(5)  # each answer takes 5 s of real time (the time-out is 2 s here)
        return 503

    receiver = Receiver(respond=slow_and_failing).start()
    try:
        with webhooks.partner() as partner:
            assert webhooks.put_webhook(partner, receiver.url).status_code == 200
            events = [_test_event_after_first_attempt(partner) for _ in range(3)]
            slow.set()
            moved = advance(partner, seconds=60)
            assert moved["came_due"]["webhook_attempts"] == 3
            second = [receiver.of_event(e["id"])[1] for e in events]
            stamps = [int(r.headers["Service-Timestamp"]) for r in second]
            assert stamps[1] - stamps[0] == 5 and stamps[2] - stamps[1] == 5
            for event in events:
                assert len(_attempts(partner, event["id"])["attempts"]) == 2
                assert len(receiver.of_event(event["id"])) == 2
    finally:
        receiver.stop()


def test_the_next_advance_takes_over_what_a_dead_one_had_claimed(
    webhooks: RunningService, failing: Receiver
) -> None:
    """An advance that died mid-way (its process killed) leaves its claimed deliveries leased
    for one post's time at most, not one more per delivery ahead of them: the next advance
    after that makes their attempts."""
    with webhooks.partner() as partner:
        assert webhooks.put_webhook(partner, failing.url).status_code == 200
        events = [_test_event_after_first_attempt(partner) for _ in range(3)]
        org_id = partner.get("/me").json()["data"]["partner"]["id"]
        clock = webhooks.container.clock
        lease = webhooks.container.settings.webhook_timeout_seconds + 5.0
        dead = claim_due_of_tenant(
            webhooks.container.read_db, f"{org_id}:test", clock.real_now() + 10 * DAY,
            clock.real_now(), lease,
        )
        assert len(dead) == 3
        clock.base.advance(lease + 1)  # type: ignore[attr-defined]  # the ManualClock
        assert advance(partner, seconds=120)["came_due"]["webhook_attempts"] == 3
        assert all(len(_attempts(partner, e["id"])["attempts"]) == 2 for e in events)


def _hanging_after_first_attempts() -> tuple[Receiver, threading.Event]:
    """A receiver failing every first attempt, then hanging 3 s (past the 2 s time-out)."""
    hang = threading.Event()
    return Receiver(respond=lambda _: -3 if hang.is_set() else 503).start(), hang


def test_an_advance_starts_the_next_attempt_beside_one_that_hangs(
    webhooks: RunningService,
) -> None:
    """One time-out per advance, not one per due delivery: a receiver that hangs held the
    advance 15 s per delivery (a client's own time-out ran out), and the first deliveries'
    leases ran out meanwhile, so the dispatcher attempted them a second time."""
    receiver, hang = _hanging_after_first_attempts()
    try:
        with webhooks.partner() as partner:
            assert webhooks.put_webhook(partner, receiver.url).status_code == 200
            events = [_test_event_after_first_attempt(partner) for _ in range(8)]
            hang.set()
            started = time.monotonic()
            moved = advance(partner, seconds=120)
            took = time.monotonic() - started
            assert moved["came_due"]["webhook_attempts"] == 8
            assert took < 13.0, took  # one after another: 16 s and more
            for event in events:
                found = _attempts(partner, event["id"])
                assert [a["number"] for a in found["attempts"]] == [1, 2]
                assert found["attempts"][1]["attempted_at"] == moved["now"]
            wait_until(lambda: all(len(receiver.of_event(e["id"])) == 2 for e in events) or None)
    finally:
        receiver.stop()


def test_live_retries_behind_a_hanging_receiver_start_side_by_side(
    webhooks: RunningService,
) -> None:
    """Spec 6: five attempts over 24 hours. Retries due together were posted one at a time,
    a time-out each, so an endpoint with many failed events had its later ones hours late."""
    receiver, hang = _hanging_after_first_attempts()
    org = webhooks.new_org()
    try:
        with webhooks.client(webhooks.new_key(org, "live")) as live:
            assert live.put("/webhook_endpoint", json={"url": receiver.url}).status_code == 200
            events = [_test_event_after_first_attempt(live) for _ in range(8)]
            hang.set()
            webhooks.container.clock.base.advance(SCHEDULE[0])  # type: ignore[attr-defined]
            seconds = wait_until(lambda: _second_posts_span(receiver, events))
            assert seconds < 11.0, seconds  # one after another: 14 s and more
    finally:
        receiver.stop()


def _second_posts_span(receiver: Receiver, events: list[dict[str, Any]]) -> float | None:
    """Seconds from the first to the last second attempt's arrival, once all arrived."""
    seconds = [r.at for e in events for r in receiver.of_event(e["id"])[1:2]]
    return max(seconds) - min(seconds) + 1e-9 if len(seconds) == len(events) else None


def test_a_redelivery_in_a_moved_sandbox_is_due_at_its_now(
    webhooks: RunningService, failing: Receiver
) -> None:
    """Decisions 6: a sandbox's timestamps read its clock. A redelivery is queued for the
    dispatcher to make at once: its `next_attempt_at` is the sandbox's now, not a real time
    a day before it."""
    with webhooks.partner() as partner:
        assert webhooks.put_webhook(partner, failing.url).status_code == 200
        moved = advance(partner, seconds=DAY)
        event = _test_event_after_first_attempt(partner)
        answer = partner.post(f"/events/{event['id']}/redeliver")
        assert answer.status_code == 202, answer.text
        queued = answer.json()["data"]
        # Queued, or attempted (failing) already and its retry scheduled on the sandbox clock.
        assert queued["status"] == "pending" and queued["next_attempt_at"] >= moved["now"], queued
        assert _attempts(partner, event["id"])["next_attempt_at"] >= moved["now"]
