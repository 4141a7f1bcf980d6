"""Spec audit of live keys, billing and purchases: behaviour checked against the letter of the
spec and decisions.md (a purchase refuses what availability calls registered, `auto_renew`
survives the orders that use a bought domain, a quote prices as the order does)."""

from __future__ import annotations

import uuid

from conftest import RunningService, ServiceFactory
from test_orders_live import wait_status
from test_orders_sandbox import counts, error_of, new_workspace, place
from test_wallet_purchase import buy, credit


def two_live_orgs(factory: ServiceFactory, first_cents: int) -> tuple[RunningService, str, str]:
    """A service with fast live steps and two organizations with credited live wallets."""
    service = factory(fulfillment_step_seconds=0.05)
    first, second = service.new_org("First"), service.new_org("Second")
    credit(service, first, first_cents)
    credit(service, second, 5_000)
    return service, first, second


def test_purchase_refuses_a_name_another_organization_holds(
    service_factory: ServiceFactory,
) -> None:
    # Spec 4.2: each domain is charged its registration price; spec 2.5 calls a name another
    # organization holds `registered` (not available), so it cannot be bought and charged.
    service, first, second = two_live_orgs(service_factory, 5_000)
    with service.client(service.new_key(first, "live")) as owner:
        bought = buy(owner, "held-audit.com").json()["data"]
        wait_status(owner, bought["id"], "completed")
        error = error_of(buy(owner, "held-audit.com"), 409, "domains_not_submittable")
        assert error["details"]["domains"] == [{"domain": "held-audit.com", "reason": "already_owned"}]
    service.wait_projections()
    with service.client(service.new_key(second, "live")) as other:
        rows = other.post("/domains/availability", json={"domains": ["held-audit.com"]})
        assert rows.json()["data"]["domains"][0]["reason"] == "registered"
        error = error_of(buy(other, "held-audit.com"), 409, "domains_not_submittable")
        assert error["field"] == "domains"
        assert error["details"]["domains"] == [{"domain": "held-audit.com", "reason": "registered"}]
        wallet = other.get("/wallet").json()["data"]
        assert wallet["balance_cents"] == 5_000
        assert [entry["type"] for entry in wallet["entries"]] == ["credit"]
        assert other.get("/orders").json()["data"] == []


def test_sandbox_holdings_never_make_a_live_name_registered(service: RunningService) -> None:
    # Sandbox keys work on synthetic data: a name a sandbox tenant imported stays available
    # to live keys, and buying it is not refused.
    with service.partner() as sandbox:
        imported = sandbox.post("/domains/import", json={"domains": ["sandboxheld-audit.com"]})
        assert imported.json()["data"]["status"] == "completed", imported.text
    service.wait_projections()
    org = service.new_org()
    credit(service, org, 5_000)
    with service.client(service.new_key(org, "live")) as live:
        rows = live.post("/domains/availability", json={"domains": ["sandboxheld-audit.com"]})
        assert rows.json()["data"]["domains"][0]["available"] is True, rows.text
        assert buy(live, "sandboxheld-audit.com").status_code == 201


def test_auto_renew_false_survives_an_order_and_its_cancellation(
    service_factory: ServiceFactory,
) -> None:
    # Spec 4.2: `auto_renew: false` stops yearly renewal. Using the bought domain on an order
    # (and the cancellation that releases it) must not turn renewal back on.
    service = service_factory(fulfillment_step_seconds=0.05, cancel_grace_seconds=0.2)
    org = service.new_org()
    credit(service, org, 20_000)
    with service.client(service.new_key(org, "live")) as live:
        workspace = new_workspace(live)
        bought = buy(live, "norenew-audit.com").json()["data"]  # buy() sends auto_renew false
        wait_status(live, bought["id"], "completed")
        service.wait_projections()
        named = [{"domain": "norenew-audit.com", "suite": "suite_a"}]
        order = place(live, counts(workspace, a=1, domains=named)).json()["data"]
        assert order["domains"][0]["auto_renew"] is False
        assert live.post(f"/orders/{order['id']}/cancel").status_code == 200
        wait_status(live, order["id"], "cancelled")
        service.wait_projections()
        (row,) = live.get("/domains", params={"domain": "norenew-audit.com"}).json()["data"]
        assert (row["status"], row["auto_renew"]) == ("available", False)


def test_quote_prices_the_order_and_changes_nothing(service_factory: ServiceFactory) -> None:
    # decisions.md 3: `POST /quotes` is a price estimate for an order body with no side effect,
    # open to `limited` keys; the order answers its price in cents (`price_cents`).
    service = service_factory(fulfillment_step_seconds=0.05)
    org = service.new_org()
    credit(service, org, 20_000)
    with service.client(service.new_key(org, "live")) as live:
        body = counts(new_workspace(live), a=2, b=1)
        with service.client(service.new_key(org, "live", "limited")) as limited:
            quote = limited.post("/quotes", json=body)
        assert quote.status_code == 200, quote.text
        priced = quote.json()["data"]
        assert priced["price_cents"] == priced["total_cents"] == 6 * 450 + 2 * 600 + 3 * 1299
        assert live.get("/wallet").json()["data"]["balance_cents"] == 20_000
        assert live.get("/orders").json()["data"] == []
        order = place(live, body, key=str(uuid.uuid4())).json()["data"]
        assert order["price_cents"] == priced["price_cents"]
        assert live.get("/wallet").json()["data"]["balance_cents"] == 20_000 - order["price_cents"]


def test_insufficient_funds_is_documented_where_it_is_answered(
    service_factory: ServiceFactory,
) -> None:
    # decisions.md 4: a code beyond the spec's list (`insufficient_funds`, 402) is allowed when
    # documented: the operations that charge the wallet list the 402 with the error envelope.
    service = service_factory()
    with service.client() as anonymous:
        paths = anonymous.get("/schema/openapi.json").json()["paths"]
    for path in ("/partner/v1/orders", "/partner/v1/domains/purchase", "/partner/v1/swaps"):
        response = paths[path]["post"]["responses"]["402"]
        assert "insufficient_funds" in response["description"]
        schema = response["content"]["application/json"]["schema"]
        assert schema == {"$ref": "#/components/schemas/ErrorEnvelope"}


def test_a_bought_name_stays_held_after_an_order_using_it_failed(
    service_factory: ServiceFactory,
) -> None:
    service, first, second = two_live_orgs(service_factory, 20_000)
    name = "mailfail-held-audit.com"  # mailboxes refuse it: the order using it fails
    with service.client(service.new_key(first, "live")) as owner:
        bought = buy(owner, name).json()["data"]
        wait_status(owner, bought["id"], "completed")
        service.wait_projections()
        body = counts(new_workspace(owner), a=1, domains=[{"domain": name, "suite": "suite_a"}])
        order = place(owner, body)
        assert order.status_code == 201, order.text
        wait_status(owner, order.json()["data"]["id"], "failed")
    service.wait_projections()
    with service.client(service.new_key(second, "live")) as other:
        rows = other.post("/domains/availability", json={"domains": [name]}).json()
        assert rows["data"]["domains"][0]["reason"] == "registered", rows
        error_of(buy(other, name), 409, "domains_not_submittable")
