"""What a cancelled live order gives back: the licenses it never delivered and the
domains it never registered; a domain it registered stays the organization's and its
registration charge stands. A completed purchase cannot be cancelled."""

from __future__ import annotations

import time
from typing import Any

import httpx
from conftest import PATIENCE, RunningService, ServiceFactory
from test_domains_inventory import domains
from test_orders_codes_events import advance_until
from test_orders_live import event_names, wait_status
from test_orders_sandbox import counts, error_of, new_workspace, place
from test_wallet_purchase import buy, credit

from audit.replay import replay
from infra.clock import ManualClock

STEP_SECONDS = 5
GRACE_SECONDS = 60


def _live(service_factory: ServiceFactory) -> tuple[RunningService, ManualClock, str]:
    clock = ManualClock()
    service = service_factory(
        clock=clock, fulfillment_step_seconds=STEP_SECONDS, cancel_grace_seconds=GRACE_SECONDS
    )
    org = service.new_org()
    credit(service, org, 50_000)
    return service, clock, service.new_key(org, "live")


def _cancel(client: httpx.Client, clock: ManualClock, order_id: str) -> dict[str, Any]:
    assert client.post(f"/orders/{order_id}/cancel").status_code == 200
    clock.advance(GRACE_SECONDS + 1)
    return wait_status(client, order_id, "cancelled")


def _refunds(client: httpx.Client, order_id: str) -> list[int]:
    entries = client.get("/wallet").json()["data"]["entries"]
    return [e["amount_cents"] for e in entries if e["type"] == "refund" and e["order_id"] == order_id]


def _next_order_domains(client: httpx.Client, workspace: str) -> dict[str, int]:
    """Where a one-domain order would now get its domain, as its quote says."""
    quote = client.post("/quotes", json=counts(workspace, a=1)).json()["data"]
    return {"register": quote["domains_to_register"], "from_inventory": quote["domains_from_inventory"]}


def _registered(service: RunningService, clock: ManualClock, order_id: str) -> None:
    """Let the worker run the order's first step (`register`), and only that one."""
    clock.advance(STEP_SECONDS)
    deadline = time.monotonic() + PATIENCE
    while "StepCompleted" not in event_names(service, order_id):
        assert time.monotonic() < deadline, "the register step did not run"
        time.sleep(0.02)


def test_cancel_before_registration_refunds_everything_and_keeps_no_domain(
    service_factory: ServiceFactory,
) -> None:
    service, clock, key = _live(service_factory)
    with service.client(key) as live:
        workspace = new_workspace(live)
        order = place(live, counts(workspace, a=1)).json()["data"]
        name = order["domains"][0]["domain"]
        assert order["domains"][0]["price_cents"] > 0
        cancelled = _cancel(live, clock, order["id"])
        assert cancelled["refunded_cents"] == order["price_cents"]
        assert _refunds(live, order["id"]) == [order["price_cents"]]
        assert cancelled["domains"] == []
        service.wait_projections()
        assert domains(live, domain=name) == []
        assert _next_order_domains(live, workspace) == {"register": 1, "from_inventory": 0}


def test_a_bad_picture_stops_a_live_order_before_it_registers_anything(
    service_factory: ServiceFactory,
) -> None:
    """The picture URL is known from the order itself: a live order waits on the partner at
    its first step, as a sandbox one does, so cancelling it refunds all and keeps no domain."""
    service, clock, key = _live(service_factory)
    with service.client(key) as live:
        body = counts(new_workspace(live), a=1, profile_picture_url="https://localhost/me.png")
        order = place(live, body).json()["data"]
        waiting = advance_until(live, clock, order["id"], "action_required", step=STEP_SECONDS)
        assert waiting["domains"][0]["dns_records"] == []
        assert "StepCompleted" not in event_names(service, order["id"])
        cancelled = _cancel(live, clock, order["id"])
        assert cancelled["refunded_cents"] == order["price_cents"]
        assert cancelled["domains"] == []
        service.wait_projections()
        assert domains(live, domain=order["domains"][0]["domain"]) == []


def test_cancel_after_registration_keeps_the_domain_and_its_charge(
    service_factory: ServiceFactory,
) -> None:
    service, clock, key = _live(service_factory)
    with service.client(key) as live:
        workspace = new_workspace(live)
        order = place(live, counts(workspace, a=1)).json()["data"]
        (item,) = order["domains"]
        _registered(service, clock, order["id"])
        cancelled = _cancel(live, clock, order["id"])
        licenses = order["price_cents"] - item["price_cents"]
        assert cancelled["refunded_cents"] == licenses
        assert _refunds(live, order["id"]) == [licenses]
        assert [d["domain"] for d in cancelled["domains"]] == [item["domain"]]
        service.wait_projections()
        (row,) = domains(live, domain=item["domain"])
        assert (row["id"], row["status"], row["category"]) == (item["id"], "available", "inventory")
        assert _next_order_domains(live, workspace) == {"register": 0, "from_inventory": 1}


def test_purchase_cancelled_in_time_is_refunded_and_a_completed_one_cannot_be(
    service_factory: ServiceFactory,
) -> None:
    service, clock, key = _live(service_factory)
    with service.client(key) as live:
        early = buy(live, "cancel-early.com").json()["data"]
        cancelled = _cancel(live, clock, early["id"])
        assert cancelled["refunded_cents"] == early["price_cents"] > 0
        service.wait_projections()
        assert domains(live, domain="cancel-early.com") == []

        done = buy(live, "cancel-late.com").json()["data"]
        advance_until(live, clock, done["id"], "completed", step=STEP_SECONDS)
        refused = live.post(f"/orders/{done['id']}/cancel")
        error = error_of(refused, 409, "order_state_conflict")
        assert error["details"] == {"status": "completed", "kind": "purchase"}
        assert live.get(f"/orders/{done['id']}").json()["data"]["status"] == "completed"


def test_a_failure_after_registration_refunds_everything(service_factory: ServiceFactory) -> None:
    """Only a cancellation keeps a registration: a failed order was not the partner's choice."""
    service, clock, key = _live(service_factory)
    with service.client(key) as live:
        workspace = new_workspace(live)
        bought = buy(live, "mailfail-refund.com").json()["data"]
        advance_until(live, clock, bought["id"], "completed", step=STEP_SECONDS)
        service.wait_projections()
        named = [{"domain": "mailfail-refund.com", "suite": "suite_a"}]
        body = counts(workspace, a=1, b=1, domains=named)
        order = place(live, body).json()["data"]
        generated = [d for d in order["domains"] if d["source"] == "generated"]
        assert len(generated) == 1 and generated[0]["price_cents"] > 0
        failed = advance_until(live, clock, order["id"], "failed", step=STEP_SECONDS)
        assert failed["refunded_cents"] == order["price_cents"]
        assert _refunds(live, order["id"]) == [order["price_cents"]]


def test_replay_after_a_cancel_before_registration_is_identical(
    service_factory: ServiceFactory,
) -> None:
    service, clock, key = _live(service_factory)
    with service.client(key) as live:
        workspace = new_workspace(live)
        order = place(live, counts(workspace, a=1)).json()["data"]
        _cancel(live, clock, order["id"])
    service.wait_projections()
    c = service.container
    report = replay(c.settings, c.store, c.read_models)
    assert report.identical, report.as_json()


def test_orders_whose_grace_ends_together_are_all_cancelled_at_once(
    service_factory: ServiceFactory,
) -> None:
    """Their refunds go to one wallet: the worker's jobs, run side by side, conflict on it, and
    each decides again on fresh state instead of waiting out its lease."""
    service, clock, secret = _live(service_factory)
    with service.client(secret) as live:
        workspace = new_workspace(live)
        orders = [place(live, counts(workspace, a=1)).json()["data"]["id"] for _ in range(8)]
        for order_id in orders:
            assert live.post(f"/orders/{order_id}/cancel").status_code == 200
        clock.advance(GRACE_SECONDS + 1)  # the clock stands still after: no lease runs out
        for order_id in orders:
            assert wait_status(live, order_id, "cancelled")["status"] == "cancelled"
        assert all(_refunds(live, order_id) for order_id in orders)
