"""The order error codes and public events not shown elsewhere: usable_for refusals,
an unfinished purchase, cancellation and failure events, domains in progress on a live order."""

from __future__ import annotations

import time
from typing import Any

from conftest import PATIENCE, RunningService, ServiceFactory
from test_domains_inventory import domains
from test_domains_lifecycle import events_of
from test_orders_live import wait_status
from test_orders_sandbox import counts, error_of, new_workspace, place, placed, settled
from test_wallet_purchase import buy, credit

from infra.clock import ManualClock


def test_suite_b_domain_is_not_usable_for_suite_b_again(service: RunningService) -> None:
    with service.partner() as client:
        workspace = new_workspace(client)
        first = placed(client, counts(workspace, a=0, b=1))
        name = first["domains"][0]["domain"]
        again = counts(workspace, a=0, b=1, domains=[{"domain": name, "suite": "suite_b"}])
        error = error_of(place(client, again), 400, "domain_not_usable_for_provider")
        assert error["field"] == "domains[0].domain"
        assert error["details"] == {"usable_for": ["suite_a"]}
        other_suite = counts(workspace, a=1, domains=[{"domain": name, "suite": "suite_a"}])
        second = settled(client, place(client, other_suite))
        service.wait_projections()
        # Both suites send from it now: the second order's domain.connected says so, as the
        # domain list and availability do (spec 2.5).
        connected = [
            e["data"] for e in events_of(client, "domain.connected")
            if e["data"]["order_id"] == second["id"]
        ]
        assert [d["usable_for"] for d in connected] == [["suite_a"]]
        (row,) = domains(client, domain=name)
        assert row["usable_for"] == ["suite_a"]


def test_unfinished_purchase_is_not_submittable_and_live_domains_show_progress(
    service_factory: ServiceFactory,
) -> None:
    clock = ManualClock()
    service = service_factory(clock=clock, fulfillment_step_seconds=5)
    org = service.new_org()
    credit(service, org, 50_000)
    with service.client(service.new_key(org, "live")) as live:
        workspace = new_workspace(live)
        bought = buy(live, "pending-buy.com").json()["data"]
        named = counts(workspace, a=1, domains=[{"domain": "pending-buy.com", "suite": "suite_a"}])
        error = error_of(place(live, named), 409, "domains_not_submittable")
        assert error["field"] == "domains[0].domain"
        assert error["details"]["domains"] == [
            {"domain": "pending-buy.com", "reason": "not_registered_yet"}
        ]

        order = place(live, counts(workspace, a=1)).json()["data"]
        (row,) = domains(live, domain=order["domains"][0]["domain"])
        assert (row["status"], row["category"], row["order_id"]) == (
            "in_progress",
            "connected",
            order["id"],
        )
        (row,) = domains(live, domain="pending-buy.com")
        assert (row["status"], row["category"]) == ("in_progress", "inventory")
        advance_until(live, clock, bought["id"], "completed", step=5)
        advance_until(live, clock, order["id"], "completed", step=5)
        service.wait_projections()
        (row,) = domains(live, domain=order["domains"][0]["domain"])
        assert (row["status"], row["category"]) == ("active", "connected")


def test_cancel_and_failure_events(service_factory: ServiceFactory) -> None:
    clock = ManualClock()
    service = service_factory(clock=clock, cancel_grace_seconds=300, fulfillment_step_seconds=1)
    org = service.new_org()
    credit(service, org, 50_000)
    with service.client(service.new_key(org, "live")) as live:
        workspace = new_workspace(live)
        order = place(live, counts(workspace, a=1)).json()["data"]
        live.post(f"/orders/{order['id']}/cancel")
        clock.advance(301)
        cancelled = wait_status(live, order["id"], "cancelled", timeout=PATIENCE)
        service.wait_projections()
        (scheduled,) = events_of(live, "order.cancel_scheduled")
        assert scheduled["data"]["id"] == order["id"]
        assert scheduled["data"]["status"] == "cancel_scheduled" and scheduled["data"]["cancel_at"]
        (done,) = events_of(live, "order.cancelled")
        # Cancelled before its register step: the domain was never bought, so nothing is
        # released and everything is refunded (tests/test_orders_cancel_refunds.py).
        assert done["data"]["released_domains"] == []
        # ... and it says which names left the order and the inventory with the cancel.
        assert done["data"]["dropped_domains"] == [order["domains"][0]["domain"]]
        assert scheduled["data"]["destination"] == done["data"]["destination"] == order["destination"]
        assert done["data"]["refunded_cents"] == cancelled["charged_cents"] == order["price_cents"]
        assert domains(live, domain=order["domains"][0]["domain"]) == []

        mailfail = buy(live, "mailfail-events.com").json()["data"]
        advance_until(live, clock, mailfail["id"], "completed")
        service.wait_projections()
        named = [{"domain": "mailfail-events.com", "suite": "suite_a"}]
        failing = place(live, counts(workspace, a=1, domains=named)).json()["data"]
        failed = advance_until(live, clock, failing["id"], "failed")
        service.wait_projections()
        (event,) = events_of(live, "order.failed")
        assert event["data"] == {
            "id": failing["id"],
            "status": "failed",
            "reason": failed["reason"],
            "refunded_cents": failing["price_cents"],
            "destination": failing["destination"],
        }


def advance_until(
    client: Any, clock: ManualClock, order_id: str, status: str, step: float = 1
) -> dict[str, Any]:
    """Move the injected clock a step at a time until the worker has taken the order there."""
    deadline = time.monotonic() + PATIENCE
    while True:
        order: dict[str, Any] = client.get(f"/orders/{order_id}").json()["data"]
        if order["status"] == status:
            return order
        assert time.monotonic() < deadline, f"order stayed {order['status']}"
        clock.advance(step)
        time.sleep(0.05)


def test_only_kind_i_orders_take_a_login_pair(service: RunningService) -> None:
    with service.partner() as client:
        kind_i = new_workspace(client, "i")
        body = counts(kind_i, a=1)
        body["destination"].update(email="ops@acme.example", password="pw-1")
        accepted = place(client, body)
        assert accepted.status_code == 201, accepted.text
        assert "password" not in accepted.text and "login_sealed" not in accepted.text
        # Decisions 5 simulator: the provider refuses a login whose password is `invalid`.
        refused = counts(kind_i, a=1)
        refused["destination"].update(email="ops@acme.example", password="invalid")
        assert error_of(place(client, refused), 422, "provider_credentials_invalid")["field"] == (
            "destination.password"
        )
        # A quote does not try it: a limited key could test passwords with it.
        assert client.post("/quotes", json=refused).status_code == 200
        not_an_address = counts(kind_i, a=1)
        not_an_address["destination"].update(email="notanemail", password="pw-1")
        assert error_of(place(client, not_an_address), 400, "invalid_request")["field"] == (
            "destination.email"
        )
        half = counts(kind_i, a=1)
        half["destination"]["email"] = "ops@acme.example"
        assert error_of(place(client, half), 400, "provider_login_credentials_required")[
            "field"] == "destination.password"
        kind_w = new_workspace(client, "w", workspace_id="rw1", email="a@b.co", password="x")
        body = counts(kind_w, a=1)
        body["destination"].update(email="ops@acme.example", password="pw-1")
        assert error_of(place(client, body), 400, "invalid_request")["field"] == (
            "destination.email"
        )


def test_persona_names_that_would_not_make_an_address_are_refused(service: RunningService) -> None:
    """A persona's names make the local part of an address (at most 64 characters)."""
    with service.partner() as client:
        workspace = new_workspace(client)
        long_name = [{"first_name": "a" * 31, "last_name": "Lee"}]
        refused = place(client, counts(workspace, a=1, personas=long_name))
        assert error_of(refused, 400, "invalid_request")["field"] == "personas[0].first_name"
        too_many = [{"first_name": "Ann", "last_name": f"Lee{n}"} for n in range(51)]
        assert error_of(place(client, counts(workspace, a=1, personas=too_many)), 400,
                        "invalid_request")["field"] == "personas"
        longest = [{"first_name": "a" * 30, "last_name": "b" * 30}]
        order = placed(client, counts(workspace, a=1, personas=longest))
        for inbox in order["domains"][0]["inboxes"]:
            local = inbox["address"].partition("@")[0]
            assert local.startswith("a" * 30 + ".") and len(local) <= 64


def test_a_bundle_larger_than_an_order_holds_is_refused(service: RunningService) -> None:
    with service.partner() as client:
        workspace = new_workspace(client)
        bundle = client.post("/bundles", json={
            "name": "Huge", "monthly_sending_volume": 1_000_000, "send_on_weekends": False,
        }).json()["data"]
        assert bundle["required_domains"]["suite_a"] > 100
        body = {"destination": {"workspace_id": workspace}, "bundle_id": bundle["id"]}
        assert error_of(place(client, body), 400, "invalid_request")["field"] == "bundle_id"
        assert error_of(client.post("/quotes", json=body), 400, "invalid_request")["field"] == (
            "bundle_id"
        )
