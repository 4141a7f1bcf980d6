"""An order naming an imported domain whose nameservers are not pointed yet waits for them
(pending actions; spec 6 `domain.action_required`)."""

from __future__ import annotations

from typing import Any

from conftest import PATIENCE, ServiceFactory
from test_domains_imports import events_of
from test_orders_codes_events import advance_until
from test_orders_live import event_names
from test_orders_sandbox import counts, error_of, new_workspace, place, placed, wait_order
from test_wallet_purchase import credit
from webhook_receiver import wait_until

from infra.clock import ManualClock


def test_order_waits_for_nameservers_then_resumes(service_factory: ServiceFactory) -> None:
    clock = ManualClock()
    service = service_factory(clock=clock)
    with service.partner() as client:
        job = client.post("/domains/import", json={"domains": ["nsslow-shop.com"]}).json()["data"]
        assert job["status"] == "action_required"
        workspace = new_workspace(client)
        body = counts(workspace, a=1, domains=[{"domain": "nsslow-shop.com", "suite": "suite_a"}])
        order = placed(client, body)
        assert order["status"] == "action_required"
        (action,) = client.get("/orders/pending", params={"order_id": order["id"]}).json()["data"]
        assert action["id"] == order["pending_action_id"] and action["kind"] == "nameservers"
        assert action["details"]["domains"] == ["nsslow-shop.com"]
        (group,) = action["details"]["nameserver_groups"]
        assert group["domains"] == ["nsslow-shop.com"] and group["nameserver_one"]

        dom_id = order["domains"][0]["id"]
        row = client.get(f"/domains/{dom_id}").json()["data"]
        assert (row["status"], row["category"], row["order_id"]) == (
            "action_required",
            "connected",
            order["id"],
        )
        # The code its webhook gives, not the order's message.
        assert row["reason"] == "nameservers_not_pointed"
        service.wait_projections()
        # The import's own event has no order; the order's event names it and the action.
        waiting = [e for e in events_of(client, "domain.action_required") if "order_id" in e["data"]]
        assert [e["data"]["id"] for e in waiting] == [dom_id]
        assert waiting[0]["data"]["pending_action_id"] == action["id"]
        assert waiting[0]["data"]["nameservers"] == [group]
        assert len(events_of(client, "order.action_required")) == 1

        resolve = f"/orders/pending/{action['id']}/resolve"
        early = error_of(client.post(resolve, json={}), 409, "domains_not_submittable")
        # No body at all means the same as `{}` (this action needs no input).
        error_of(client.post(resolve), 409, "domains_not_submittable")
        wrong = client.post(resolve, json={"profile_picture_url": "https://cdn.example.com/a.png"})
        assert error_of(wrong, 400, "invalid_request")["field"] == "profile_picture_url"
        assert early["details"]["reason"] == "nameservers_not_pointed"
        assert early["details"]["domains"] == [
            {"domain": "nsslow-shop.com", "reason": "nameservers_not_pointed"}
        ]

        clock.advance(61)
        resolved = client.post(resolve)
        assert resolved.status_code == 200, resolved.text
        assert resolved.json()["data"]["status"] == "resolved"
        assert resolved.json()["data"]["order"]["status"] == "in_progress"
        done = wait_order(client, order["id"])
        assert done["status"] == "completed" and done["domains"][0]["inboxes"]
        error_of(client.post(resolve, json={}), 409, "order_state_conflict")

        # The domain worker sees the import through meanwhile; the row still follows the order.
        def imported() -> Any:
            found = client.get(f"/domains/import/jobs/{job['id']}").json()["data"]
            return found["status"] == "completed"

        wait_until(imported, timeout=PATIENCE)
        service.wait_projections()
        row = client.get(f"/domains/{dom_id}").json()["data"]
        assert (row["status"], row["category"], row["order_id"]) == ("active", "connected", done["id"])
        connected = events_of(client, "domain.connected")
        assert [e["data"]["id"] for e in connected] == [dom_id]


def test_picture_action_still_needs_its_url(service_factory: ServiceFactory) -> None:
    service = service_factory()
    with service.partner() as client:
        body = counts(new_workspace(client), a=2, profile_picture_url="https://10.1.2.3/p.png")
        order = placed(client, body)
        # Spec 3: every domain's move to action_required comes with domain.action_required.
        service.wait_projections()
        moved = events_of(client, "domain.action_required")
        assert sorted(e["data"]["id"] for e in moved) == sorted(d["id"] for d in order["domains"])
        for event in moved:
            assert event["data"]["status"] == "action_required"
            assert event["data"]["pending_action_id"] == order["pending_action_id"]
            assert event["data"]["reason"] == "profile_picture_url"
            row = client.get(f"/domains/{event['data']['id']}").json()["data"]
            assert (row["status"], row["reason"]) == ("action_required", "profile_picture_url")
        resolve = f"/orders/pending/{order['pending_action_id']}/resolve"
        assert error_of(client.post(resolve, json={}), 400, "invalid_request")["field"] == (
            "profile_picture_url"
        )
        unknown = client.post(resolve, json={"nameservers": True})
        assert error_of(unknown, 400, "invalid_request")["field"] == "nameservers"


def test_live_order_waits_in_its_dns_step(service_factory: ServiceFactory) -> None:
    clock = ManualClock()
    service = service_factory(clock=clock, fulfillment_step_seconds=1)
    org = service.new_org()
    credit(service, org, 10_000)
    with service.client(service.new_key(org, "live")) as live:
        imported = live.post("/domains/import", json={"domains": ["nsslow-live.com"]})
        assert imported.status_code == 201, imported.text
        body = counts(
            new_workspace(live), a=1, domains=[{"domain": "nsslow-live.com", "suite": "suite_a"}]
        )
        order = place(live, body).json()["data"]
        assert order["status"] == "in_progress"
        waiting = advance_until(live, clock, order["id"], "action_required")
        resolve = f"/orders/pending/{waiting['pending_action_id']}/resolve"
        error_of(live.post(resolve, json={}), 409, "domains_not_submittable")
        clock.advance(61)
        resumed = live.post(resolve, json={})
        assert resumed.status_code == 200, resumed.text
        assert resumed.json()["data"]["order"]["status"] == "in_progress"
        done = advance_until(live, clock, order["id"], "completed")
        assert done["domains"][0]["inboxes"] and done["domains"][0]["dns_records"]
    names = event_names(service, order["id"])
    assert names.count("ActionRequired") == 1 and names.count("Resumed") == 1
    assert names.count("StepCompleted") == 4 and names[-1] == "Completed"


def test_an_unpointed_import_released_by_a_cancel_still_waits(
    service_factory: ServiceFactory,
) -> None:
    """Spec 2.4: a domain waiting for a nameserver update is `action_required`, whatever orders
    it has been on; the next order naming it waits too, and none picks it by itself."""
    clock = ManualClock()
    service = service_factory(clock=clock, cancel_grace_seconds=30)
    with service.partner() as client:
        client.post("/domains/import", json={"domains": ["nsnever-loop.com"]})
        workspace = new_workspace(client)
        named = [{"domain": "nsnever-loop.com", "suite": "suite_a"}]
        first = placed(client, counts(workspace, a=1, domains=named))
        assert first["status"] == "action_required"
        # The order's own view agrees with the domain list while it waits.
        assert first["domains"][0]["status"] == "action_required"
        dom_id = first["domains"][0]["id"]
        assert client.post(f"/orders/{first['id']}/cancel").status_code == 200
        advance_until(client, clock, first["id"], "cancelled", step=31)
        service.wait_projections()
        row = client.get(f"/domains/{dom_id}").json()["data"]
        assert (row["status"], row["category"]) == ("action_required", "inventory")
        # The cancelled order shows the domain as the list does.
        cancelled = client.get(f"/orders/{first['id']}").json()["data"]
        assert cancelled["domains"][0]["status"] == "action_required"

        picked = placed(client, counts(workspace, a=1))
        assert picked["status"] == "completed"
        assert picked["domains"][0]["domain"] != "nsnever-loop.com"
        again = placed(client, counts(workspace, a=1, domains=named))
        assert again["status"] == "action_required"
        assert again["domains"][0]["id"] == dom_id
