"""Live orders: charged at acceptance, provisioned step by step by the worker, resumed after a
restart without repeating a step, refunded when they fail."""

from __future__ import annotations

import time
from typing import Any

from conftest import PATIENCE, RunningService, ServiceFactory
from test_orders_sandbox import counts, error_of, new_workspace, place
from test_wallet_purchase import buy, credit

from domain.orders import Order
from infra.clock import ManualClock
from infra.ids import parse_id


def wait_status(client: Any, order_id: str, status: str, timeout: float = PATIENCE) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        order: dict[str, Any] = client.get(f"/orders/{order_id}").json()["data"]
        if order["status"] == status:
            return order
        assert time.monotonic() < deadline, f"order stayed {order['status']}"
        time.sleep(0.02)


def event_names(service: RunningService, order_id: str) -> list[str]:
    uuid_ = parse_id("ord", order_id)
    assert uuid_ is not None
    events = service.container.store.recorder.select_events(uuid_)
    return [e.topic.rsplit(".", 1)[-1] for e in events]


def test_live_order_charged_then_completed_step_by_step(service_factory: ServiceFactory) -> None:
    service = service_factory(fulfillment_step_seconds=0.05)
    org = service.new_org()
    with service.client(service.new_key(org, "live")) as live:
        workspace = new_workspace(live)
        error_of(place(live, counts(workspace, a=1)), 402, "insufficient_funds")
        credit(service, org, 10_000)
        order = place(live, counts(workspace, a=1)).json()["data"]
        assert order["status"] == "in_progress"
        assert order["domains"][0]["inboxes"] == []
        price = 3 * 450 + 1299
        assert order["price_cents"] == price
        assert live.get("/wallet").json()["data"]["balance_cents"] == 10_000 - price
        done = wait_status(live, order["id"], "completed")
        assert len(done["domains"][0]["inboxes"]) == 3
        assert done["domains"][0]["dns_records"]
    names = event_names(service, order["id"])
    assert names == [
        "Placed", "StepCompleted", "StepCompleted", "StepCompleted", "StepCompleted", "Completed"
    ]


def test_worker_restarted_mid_order_finishes_it_once(service_factory: ServiceFactory) -> None:
    first = service_factory(fulfillment_step_seconds=0.3)
    org = first.new_org()
    secret = first.new_key(org, "live")
    credit(first, org, 10_000)
    with first.client(secret) as live:
        order = place(live, counts(new_workspace(live), a=1)).json()["data"]
        deadline = time.monotonic() + PATIENCE
        while "StepCompleted" not in event_names(first, order["id"]):
            assert time.monotonic() < deadline
            time.sleep(0.02)
    first.server.should_exit = True
    first.thread.join(timeout=30)
    first.container.close()

    second = service_factory(fulfillment_step_seconds=0.05)
    with second.client(secret) as live:
        wait_status(live, order["id"], "completed")
    names = event_names(second, order["id"])
    assert names.count("StepCompleted") == 4 and names.count("Completed") == 1
    order_agg = second.container.store.find(parse_id("ord", order["id"]), Order)
    assert len(order_agg.steps_done) == len(set(order_agg.steps_done)) == 4


def test_failed_live_order_is_refunded_and_purchase_feeds_inventory(
    service_factory: ServiceFactory,
) -> None:
    service = service_factory(fulfillment_step_seconds=0.05)
    org = service.new_org()
    credit(service, org, 20_000)
    with service.client(service.new_key(org, "live")) as live:
        workspace = new_workspace(live)
        bought = buy(live, "mailfail-one.com").json()["data"]
        wait_status(live, bought["id"], "completed")
        service.wait_projections()
        balance = live.get("/wallet").json()["data"]["balance_cents"]
        named = counts(workspace, a=1, domains=[{"domain": "mailfail-one.com", "suite": "suite_a"}])
        order = place(live, named).json()["data"]
        assert order["domains"][0]["source"] == "named"
        assert order["price_cents"] == 3 * 450
        failed = wait_status(live, order["id"], "failed")
        assert "mailfail-one.com" in failed["reason"]
        wallet = live.get("/wallet").json()["data"]
        assert wallet["balance_cents"] == balance
        assert wallet["entries"][0]["type"] == "refund"


def test_a_live_order_is_completed_after_exactly_its_four_steps(
    service_factory: ServiceFactory,
) -> None:
    """One step (register, dns, mailboxes, sequencer) per PARTNER_API_FULFILLMENT_STEP_SECONDS:
    the last step's save completes the order, with no idle interval after it."""
    clock = ManualClock()
    service = service_factory(clock=clock, fulfillment_step_seconds=5)
    org = service.new_org()
    credit(service, org, 10_000)
    with service.client(service.new_key(org, "live")) as live:
        order = place(live, counts(new_workspace(live), a=1)).json()["data"]
        for step in range(1, 5):
            clock.advance(5)
            wait_for_steps(service, order["id"], step)
        assert wait_status(live, order["id"], "completed")["status"] == "completed"


def wait_for_steps(service: RunningService, order_id: str, count: int) -> None:
    deadline = time.monotonic() + PATIENCE
    while event_names(service, order_id).count("StepCompleted") < count:
        assert time.monotonic() < deadline, f"step {count} never ran"
        time.sleep(0.05)
