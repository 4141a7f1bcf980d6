"""Yearly renewal and lapse (decisions.md 6): on the sandbox clock for sandbox keys, on real
time (the worker) for live keys, `PATCH /domains/{id}` to turn `auto_renew` off or on."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
from conftest import RunningService, ServiceFactory
from pool_support import attach, attached, conditions, finished, pooled
from sandbox_clock_support import advance, completed_order
from test_domains_imports import wait_job
from test_orders_live import wait_status
from test_orders_sandbox import counts, error_of, new_workspace, placed, wait_order
from test_swaps import settled
from test_wallet_purchase import credit

from infra.clock import ManualClock
from workers.orders import FulfillmentWorker

START = 1_800_000_000.0
DAY = 86_400
YEAR = 31_622_400  # one advance at most: 366 days


def _patch(client: httpx.Client, dom_id: str, auto_renew: bool) -> dict[str, Any]:
    answer = client.patch(f"/domains/{dom_id}", json={"auto_renew": auto_renew})
    assert answer.status_code == 200, answer.text
    data: dict[str, Any] = answer.json()["data"]
    return data


def _entries(client: httpx.Client, kind: str) -> list[dict[str, Any]]:
    entries = client.get("/wallet", params={"per_page": 100}).json()["data"]["entries"]
    return [e for e in entries if e["type"] == kind]


def test_a_years_advance_renews_bought_domains_and_lapses_the_others(
    service_factory: ServiceFactory,
) -> None:
    service = service_factory(clock=ManualClock(START))
    with service.partner() as sandbox:
        order = completed_order(sandbox, a=3)
        kept, dropped, turned_back = order["domains"]
        assert _patch(sandbox, dropped["id"], False)["auto_renew"] is False
        assert _patch(sandbox, turned_back["id"], False)["auto_renew"] is False
        assert _patch(sandbox, turned_back["id"], True)["auto_renew"] is True
        error_of(sandbox.patch(f"/domains/{kept['id']}", json={"auto_renew": "no"}), 400,
                 "invalid_request")
        error_of(sandbox.patch("/domains/dom_" + "0" * 32, json={"auto_renew": False}), 404,
                 "not_found")
        job = sandbox.post("/domains/import", json={"domains": ["customer-owned.com"]})
        imported = wait_job(sandbox, job.json()["data"]["id"], "completed")
        row = sandbox.get("/domains", params={"domain": "customer-owned.com"}).json()["data"][0]
        refused = sandbox.patch(f"/domains/{row['id']}", json={"auto_renew": False})
        error_of(refused, 409, "domain_not_renewable")
        assert imported["status"] == "completed"

        assert advance(sandbox, seconds=364 * DAY)["came_due"]["renewals"] == 0
        came_due = advance(sandbox, seconds=2 * DAY)["came_due"]
        assert (came_due["renewals"], came_due["lapses"]) == (2, 1)
        renewals = _entries(sandbox, "renewal")
        assert len(renewals) == 2 and {e["amount_cents"] for e in renewals} == {0}
        assert {e["order_id"] for e in renewals} == {order["id"]}
        # Renewed on its first anniversary, the term now runs to its second.
        second = datetime.fromtimestamp(START, tz=UTC).replace(year=2029).date().isoformat()
        assert all(e["description"].endswith(f"until {second}") for e in renewals), renewals
        service.wait_projections()
        assert sandbox.get("/domains", params={"domain": dropped["domain"]}).json()["data"] == []
        view = sandbox.get(f"/orders/{order['id']}").json()["data"]
        assert {d["domain"] for d in view["domains"]} == {kept["domain"], turned_back["domain"]}
        error_of(sandbox.get(f"/domains/{dropped['id']}"), 404, "not_found")
        # Each anniversary once; the next one a year on.
        assert advance(sandbox, seconds=300 * DAY)["came_due"]["renewals"] == 0
        assert advance(sandbox, seconds=70 * DAY)["came_due"]["renewals"] == 2
        assert len(_entries(sandbox, "renewal")) == 4


def _buy(client: httpx.Client, *entries: tuple[str, bool]) -> dict[str, Any]:
    body = {"domains": [{"domain": name, "auto_renew": renew} for name, renew in entries]}
    answer = client.post(
        "/domains/purchase", json=body, headers={"Idempotency-Key": str(uuid.uuid4())}
    )
    assert answer.status_code == 201, answer.text
    data: dict[str, Any] = answer.json()["data"]
    return data


def _completed_live(client: httpx.Client, clock: ManualClock, order_id: str) -> None:
    deadline = time.monotonic() + 30
    while client.get(f"/orders/{order_id}").json()["data"]["status"] != "completed":
        assert time.monotonic() < deadline, "the purchase did not complete"
        clock.advance(1)
        time.sleep(0.05)


def test_live_renewals_charge_the_wallet_and_wait_for_a_credit(
    service_factory: ServiceFactory,
) -> None:
    clock = ManualClock(START)
    service = service_factory(clock=clock, fulfillment_step_seconds=1)
    org = service.new_org()
    credit(service, org, 2 * 1299 + 1599)
    with service.client(service.new_key(org, "live")) as live:
        order = _buy(live, ("renewing-one.com", True), ("lapsing-one.com", False))
        _completed_live(live, clock, order["id"])
        worker = FulfillmentWorker(service.container)
        with service.client(service.new_key(org)) as sandbox:
            advance(sandbox, seconds=YEAR)  # the sandbox clock moves nothing live
        assert worker.renew_live_terms() == 0
        clock.advance(YEAR)
        service.wait_projections()
        assert worker.renew_live_terms() == 2
        (renewal,) = _entries(live, "renewal")
        assert renewal["amount_cents"] == 1599 and renewal["order_id"] == order["id"]
        assert live.get("/wallet").json()["data"]["balance_cents"] == 0
        service.wait_projections()
        assert live.get("/domains", params={"domain": "lapsing-one.com"}).json()["data"] == []

        # The next year the wallet is empty: action_required, tried again daily.
        clock.advance(365 * DAY)
        service.wait_projections()
        worker.renew_live_terms()
        service.wait_projections()
        (row,) = live.get("/domains", params={"domain": "renewing-one.com"}).json()["data"]
        assert (row["status"], row["reason"]) == ("action_required", "renewal_payment_failed")
        events = live.get("/events", params={"type": "domain.action_required"}).json()["data"]
        assert events[0]["data"]["reason"] == "renewal_payment_failed"
        credit(service, org, 1599)
        clock.advance(DAY)
        service.wait_projections()
        assert worker.renew_live_terms() == 1
        service.wait_projections()
        (row,) = live.get("/domains", params={"domain": "renewing-one.com"}).json()["data"]
        assert row["status"] == "available" and "reason" not in row
        assert len(_entries(live, "renewal")) == 2
        wait_status(live, order["id"], "completed")


def test_patch_needs_auto_renew_after_finding_the_domain(service_factory: ServiceFactory) -> None:
    service = service_factory(clock=ManualClock(START))
    with service.partner() as sandbox, service.partner() as stranger:
        order = completed_order(sandbox)
        dom_id = order["domains"][0]["id"]
        error_of(stranger.patch(f"/domains/{dom_id}", json={}), 404, "not_found")
        refused = sandbox.patch(f"/domains/{dom_id}", json={})
        assert error_of(refused, 400, "invalid_request")["field"] == "auto_renew"
        unknown = sandbox.patch(f"/domains/{dom_id}", json={"auto_renew": True, "x": 1})
        assert error_of(unknown, 400, "invalid_request")["field"] == "x"


def test_a_lapsed_pool_domain_leaves_the_pool(service_factory: ServiceFactory) -> None:
    """A lapse takes the domain out of inventory, its order and the pool (decisions.md 6, spec
    4.2: a pool domain needs its order's inboxes), with `pool.domain_removed`; the PATCH that
    turned `auto_renew` off moved the domain's `updated_at`."""
    clock = ManualClock(START)
    service = service_factory(clock=clock)
    with service.partner() as sandbox:
        lapsing, kept = pooled(sandbox, 2)
        rows = sandbox.get("/domains", params={"domain": lapsing}).json()["data"]
        clock.advance(60)
        patched = _patch(sandbox, rows[0]["id"], False)
        assert patched["updated_at"] > rows[0]["updated_at"]
        assert advance(sandbox, seconds=YEAR)["came_due"]["lapses"] == 1
        service.wait_projections()
        assert conditions(sandbox) == {kept: "available"}
        error_of(attach(sandbox, new_workspace(sandbox), 2), 409, "insufficient_inventory")
        events = sandbox.get("/events", params={"type": "pool.domain_removed"}).json()["data"]
        assert [e["data"]["domain"] for e in events] == [lapsing]


def test_a_lapsed_domain_leaves_the_workspace_it_was_attached_to(
    service_factory: ServiceFactory,
) -> None:
    """No longer the organization's, an attached pool domain leaves the pool and its workspace
    too: the pool lists only what attach can still hand out."""
    clock = ManualClock(START)
    service = service_factory(clock=clock)
    with service.partner() as sandbox:
        lapsing, kept = pooled(sandbox, 2)
        workspace = new_workspace(sandbox)
        assert attached(sandbox, workspace, 2)["status"] == "completed"
        rows = sandbox.get("/domains", params={"domain": lapsing}).json()["data"]
        _patch(sandbox, rows[0]["id"], False)
        assert advance(sandbox, seconds=YEAR)["came_due"]["lapses"] == 1
        service.wait_projections()
        assert conditions(sandbox) == {kept: "assigned"}
        refused = sandbox.post("/pool/release", json={"domains": [lapsing]})
        assert error_of(refused, 409, "pool_state_conflict")["details"]["domains"] == [
            {"domain": lapsing, "condition": "removed"}
        ]
        job = sandbox.post("/pool/release", json={"domains": [kept]}).json()["data"]
        assert finished(sandbox, f"/pool/releases/{job['id']}")["status"] == "completed"
        service.wait_projections()
        assert conditions(sandbox) == {kept: "available"}
        error_of(attach(sandbox, workspace, 2), 409, "insufficient_inventory")
        events = sandbox.get("/events", params={"type": "pool.domain_removed"}).json()["data"]
        assert [(e["data"]["domain"], e["data"]["status"]) for e in events] == [
            (lapsing, "removed")
        ]


def test_a_lapse_leaves_the_rows_of_its_purchase_siblings_as_they_are(
    service_factory: ServiceFactory,
) -> None:
    """A purchase's lapsing domain moves the purchase: its other domain, on an order since,
    keeps the row that order gave it (it showed as free inventory)."""
    service = service_factory(clock=ManualClock(START))
    with service.partner() as sandbox:
        bought = _buy(sandbox, ("sibling-kept.com", True), ("sibling-lapsing.com", False))
        wait_order(sandbox, bought["id"])
        body = counts(new_workspace(sandbox), a=1)
        body["domains"] = [{"domain": "sibling-kept.com", "suite": "suite_a"}]
        order = placed(sandbox, body)
        assert order["status"] == "completed", order
        came_due = advance(sandbox, seconds=YEAR)["came_due"]
        assert (came_due["renewals"], came_due["lapses"]) == (1, 1)
        service.wait_projections()
        rows = sandbox.get("/domains", params={"domain": "sibling-kept.com"}).json()["data"]
        assert [(r["status"], r["category"], r["order_id"]) for r in rows] == [
            ("active", "connected", order["id"])
        ]
        assert sandbox.get("/domains", params={"domain": "sibling-lapsing.com"}).json()["data"] == []


def test_a_bought_domain_that_broke_an_order_still_renews_or_lapses(
    service_factory: ServiceFactory,
) -> None:
    """A purchased name that a later order's mailbox suite refused is `failed` but paid for:
    its year renews (or, with auto_renew off, lapses) like any other."""
    service = service_factory(clock=ManualClock(START))
    with service.partner() as sandbox:
        purchase = _buy(sandbox, ("mailfail-kept.com", True), ("mailfail-off.com", True))
        assert wait_order(sandbox, purchase["id"])["status"] == "completed"
        workspace = new_workspace(sandbox)
        for name in ("mailfail-kept.com", "mailfail-off.com"):
            named = counts(workspace, a=1, domains=[{"domain": name, "suite": "suite_a"}])
            failed = placed(sandbox, named)
            assert failed["status"] == "failed", failed
        service.wait_projections()
        off = sandbox.get("/domains", params={"domain": "mailfail-off.com"}).json()["data"][0]
        assert off["status"] == "failed"
        assert _patch(sandbox, off["id"], False)["auto_renew"] is False
        own = placed(sandbox, counts(workspace, a=1))
        came_due = advance(sandbox, seconds=YEAR)["came_due"]
        assert (came_due["renewals"], came_due["lapses"]) == (2, 1), came_due
        renewed = {e["description"].split()[2] for e in _entries(sandbox, "renewal")}
        assert "mailfail-kept.com" in renewed and "mailfail-off.com" not in renewed
        service.wait_projections()
        assert sandbox.get("/domains", params={"domain": "mailfail-off.com"}).json()["data"] == []
        assert own["status"] == "completed"


def test_an_order_shows_the_auto_renew_its_domain_has_now(service: RunningService) -> None:
    """`PATCH /domains/{id}` changes the one `dom_` that `GET /orders` also shows."""
    with service.partner() as sandbox:
        order = completed_order(sandbox, a=2)
        changed, kept = order["domains"]
        assert _patch(sandbox, changed["id"], False)["auto_renew"] is False
        one = sandbox.get(f"/orders/{order['id']}").json()["data"]
        (listed,) = [o for o in sandbox.get("/orders").json()["data"] if o["id"] == order["id"]]
        for view in (one, listed):
            renews = {d["id"]: d["auto_renew"] for d in view["domains"]}
            assert renews == {changed["id"]: False, kept["id"]: True}, renews


def test_a_name_a_swap_took_off_its_order_is_gone_for_good_once_it_lapsed(
    service_factory: ServiceFactory,
) -> None:
    """A lapsed name is no longer the organization's: the rows of orders a swap took it off
    must not offer it as free inventory (free of charge, under its dead `dom_` id) nor let a
    partner name it as owned."""
    service = service_factory(clock=ManualClock(START))
    with service.partner() as sandbox:
        workspace = new_workspace(sandbox)
        order = completed_order(sandbox, workspace)
        old = order["domains"][0]
        swapped = sandbox.post("/swaps", json={
            "order_id": order["id"], "domain": old["domain"], "type": "standard",
            "new_domain": f"swapped-in{uuid.uuid4().hex[:6]}.com",
        })
        assert settled(sandbox, swapped)["status"] == "completed"
        service.wait_projections()
        back = sandbox.get(f"/domains/{old['id']}").json()["data"]
        assert (back["status"], back["category"]) == ("available", "inventory"), back
        assert _patch(sandbox, old["id"], False)["auto_renew"] is False
        assert advance(sandbox, seconds=YEAR)["came_due"]["lapses"] == 1
        service.wait_projections()

        later = placed(sandbox, counts(workspace, a=1))
        assert old["domain"] not in {d["domain"] for d in later["domains"]}, later
        error_of(sandbox.get(f"/domains/{old['id']}"), 404, "not_found")
        named = counts(workspace, a=1, domains=[{"domain": old["domain"], "suite": "suite_a"}])
        refused = sandbox.post("/quotes", json=named)
        assert error_of(refused, 409, "domain_not_imported")["field"] == "domains[0].domain"


def test_a_domains_updated_at_moves_with_its_renewal_not_with_a_siblings_lapse(
    service_factory: ServiceFactory,
) -> None:
    service = service_factory(clock=ManualClock(START))
    with service.partner() as sandbox:
        order = completed_order(sandbox, a=2)
        kept, swapped = order["domains"]
        advance(sandbox, seconds=100 * DAY)
        done = settled(sandbox, sandbox.post("/swaps", json={
            "order_id": order["id"], "domain": swapped["domain"], "type": "standard"}))
        assert done["status"] == "completed", done
        view = sandbox.get(f"/orders/{order['id']}").json()["data"]
        [brought] = [d for d in view["domains"] if d["domain"] != kept["domain"]]
        _patch(sandbox, brought["id"], False)  # bought at the swap: lapses 100 days after

        def updated_at() -> str:
            service.wait_projections()
            row = sandbox.get(f"/domains/{kept['id']}").json()["data"]
            return str(row["updated_at"])

        # The kept domain and the one the swap put back in inventory renew on one anniversary.
        assert advance(sandbox, seconds=300 * DAY)["came_due"]["renewals"] == 2
        [renewed_at] = {entry["created_at"] for entry in _entries(sandbox, "renewal")}
        assert updated_at() == renewed_at
        assert advance(sandbox, seconds=100 * DAY)["came_due"]["lapses"] == 1
        assert updated_at() == renewed_at


def test_a_name_its_waiting_order_never_registered_does_not_renew(
    service_factory: ServiceFactory,
) -> None:
    """An order waiting on the partner before its `register` step holds names that are not
    the organization's yet: a year on, nothing renews (live would charge each)."""
    service = service_factory(clock=ManualClock(START))
    with service.partner() as sandbox:
        body = counts(new_workspace(sandbox), a=2, profile_picture_url="http://private.lan/a.png")
        waiting = placed(sandbox, body)
        assert waiting["status"] == "action_required", waiting
        came_due = advance(sandbox, seconds=YEAR)["came_due"]
        assert (came_due["renewals"], came_due["lapses"]) == (0, 0)
        assert _entries(sandbox, "renewal") == []
        service.wait_projections()
        for domain in waiting["domains"]:
            row = sandbox.get(f"/domains/{domain['id']}").json()["data"]
            assert row["updated_at"] == waiting["updated_at"], row
