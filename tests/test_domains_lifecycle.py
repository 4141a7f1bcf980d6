"""A domain's row across purchases and orders (issues 4 and 5): real DNS on a bare purchase,
`failed` after a failed order and not drawn again, one `domain.connected` per order domain."""

from __future__ import annotations

import base64
from typing import Any

import httpx
from conftest import RunningService, ServiceFactory
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey
from cryptography.hazmat.primitives.serialization import load_der_public_key
from test_domains_inventory import domains, forward
from test_orders_live import wait_status
from test_orders_sandbox import counts, new_workspace, place, placed
from test_wallet_purchase import buy, credit


def events_of(client: httpx.Client, type_: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = client.get("/events", params={"per_page": 100}).json()["data"]
    return [e for e in events if e["type"] == type_]


def test_purchased_domain_gets_real_mail_dns(service_factory: ServiceFactory) -> None:
    service = service_factory(fulfillment_step_seconds=0.05)
    org = service.new_org()
    credit(service, org, 5_000)
    with service.client(service.new_key(org, "live")) as live:
        bought = buy(live, "dns-bought.com").json()["data"]
        done = wait_status(live, bought["id"], "completed")
        service.wait_projections()
        (row,) = domains(live, domain="dns-bought.com")
        assert row["id"] == bought["domains"][0]["id"]
        assert (row["status"], row["category"], row["source"]) == (
            "available",
            "inventory",
            "purchased",
        )
        assert "provider" not in row and row["auto_renew"] is False
        assert live.get(f"/domains/{row['id']}").json()["data"] == row
        records = row["dns_records"]
        assert records == done["domains"][0]["dns_records"]
        assert {r["type"] for r in records} == {"MX", "TXT"}
        txt = {r["name"]: r["value"] for r in records if r["type"] == "TXT"}
        assert txt["dns-bought.com"].startswith("v=spf1 ")
        assert txt["_dmarc.dns-bought.com"].startswith("v=DMARC1; p=")
        (dkim_name,) = [n for n in txt if n.endswith("._domainkey.dns-bought.com")]
        key = load_der_public_key(base64.b64decode(txt[dkim_name].split("p=", 1)[1]))
        assert isinstance(key, RSAPublicKey) and key.key_size == 2048

        service.wait_projections()
        (completed,) = events_of(live, "order.completed")
        assert completed["data"]["domains"][0]["provider"] is None
        assert completed["data"]["domains"][0]["dns_records"] == records
        assert events_of(live, "domain.connected") == []


def test_failed_order_fails_the_domain_that_broke_it_and_frees_the_rest(
    service_factory: ServiceFactory,
) -> None:
    service = service_factory(fulfillment_step_seconds=0.05)
    org = service.new_org()
    credit(service, org, 20_000)
    with service.client(service.new_key(org, "live")) as live:
        workspace = new_workspace(live)
        bought = buy(live, "mailfail-stock.com", "healthy-stock.com").json()["data"]
        wait_status(live, bought["id"], "completed")
        service.wait_projections()
        order = place(live, counts(workspace, a=2)).json()["data"]
        assert {d["domain"] for d in order["domains"]} == {
            "mailfail-stock.com",
            "healthy-stock.com",
        }
        assert {d["source"] for d in order["domains"]} == {"inventory"}
        failed = wait_status(live, order["id"], "failed")
        shown = {d["domain"]: d["status"] for d in failed["domains"]}
        assert shown == {"mailfail-stock.com": "failed", "healthy-stock.com": "available"}
        service.wait_projections()
        (row,) = domains(live, domain="mailfail-stock.com")
        assert (row["status"], row["category"]) == ("failed", "inventory")
        assert row["reason"] == failed["reason"] and "order_id" not in row
        assert [r["id"] for r in domains(live, status="failed")] == [row["id"]]
        # The domain that did not break the order is the organization's as before.
        (healthy,) = domains(live, domain="healthy-stock.com")
        assert (healthy["status"], healthy["category"]) == ("available", "inventory")

        drawn = live.post("/quotes", json=counts(workspace, a=2)).json()["data"]
        assert (drawn["domains_to_register"], drawn["domains_from_inventory"]) == (1, 1)
        # Whatever later touches the domain that broke the order, it is not picked again.
        forward(live, ["mailfail-stock.com"], "https://f.example/")
        service.wait_projections()
        drawn = live.post("/quotes", json=counts(workspace, a=2)).json()["data"]
        assert (drawn["domains_to_register"], drawn["domains_from_inventory"]) == (1, 1)
        named = counts(
            workspace, a=1, domains=[{"domain": "mailfail-stock.com", "suite": "suite_a"}]
        )
        retry = live.post("/quotes", json=named)
        assert retry.status_code == 200, retry.text
        assert retry.json()["data"]["domains_from_inventory"] == 1


def test_imported_domain_on_an_order_connects_once(service: RunningService) -> None:
    with service.partner() as client:
        assert client.post("/domains/import", json={"domains": ["once.com"]}).status_code == 201
        workspace = new_workspace(client)
        service.wait_projections()
        (imported,) = domains(client, domain="once.com")
        body = counts(workspace, a=2, domains=[{"domain": "once.com", "suite": "suite_a"}])
        body["suite_a"]["domains"] = 1
        body["suite_b"] = {"domains": 1, "inboxes_per_domain": 1}
        order = placed(client, body)
        assert order["status"] == "completed"
        service.wait_projections()
        (row,) = domains(client, domain="once.com")
        assert row["id"] == imported["id"]
        assert (row["status"], row["category"], row["order_id"]) == (
            "active",
            "connected",
            order["id"],
        )
        assert row["provider"] == "suite_a" and row["usable_for"] == ["suite_a", "suite_b"]
        connected = events_of(client, "domain.connected")
        assert sorted(e["data"]["id"] for e in connected) == sorted(
            d["id"] for d in order["domains"]
        )
        assert [e["data"]["domain"] for e in connected].count("once.com") == 1


def test_an_imported_domain_that_broke_an_order_stays_unpicked(service: RunningService) -> None:
    """Its Domain record knows nothing of the failure: later events on it (forwarding) must
    not make placement pick it again."""
    with service.partner() as client:
        workspace = new_workspace(client)
        assert (
            client.post("/domains/import", json={"domains": ["mailfail-imp.com"]}).status_code
            == 201
        )
        service.wait_projections()
        named = counts(workspace, a=1, domains=[{"domain": "mailfail-imp.com", "suite": "suite_a"}])
        assert placed(client, named)["status"] == "failed"
        forward(client, ["mailfail-imp.com"], "https://f.example/")
        service.wait_projections()
        drawn = client.post("/quotes", json=counts(workspace, a=1)).json()["data"]
        assert (drawn["domains_to_register"], drawn["domains_from_inventory"]) == (1, 0)


def test_a_waiting_orders_domain_keeps_action_required_until_the_cancel_ends(
    service_factory: ServiceFactory,
) -> None:
    """Cancelling an order that waits on the partner: during the grace window its domain
    still needs the partner (not `in_progress`: nothing is being set up), in the order and
    the list alike; afterwards it is inventory again."""
    service = service_factory(cancel_grace_seconds=0.5)
    with service.partner() as client:
        assert client.post("/domains/import", json={"domains": ["waiting.com"]}).status_code == 201
        body = counts(
            new_workspace(client), a=1, profile_picture_url="https://localhost/me.png",
            domains=[{"domain": "waiting.com", "suite": "suite_a"}],
        )
        order = placed(client, body)
        assert order["status"] == "action_required"
        cancelling = client.post(f"/orders/{order['id']}/cancel").json()["data"]
        assert cancelling["status"] == "cancel_scheduled"
        assert [d["status"] for d in cancelling["domains"]] == ["action_required"]
        service.wait_projections()
        (row,) = domains(client, domain="waiting.com")
        assert (row["status"], row["category"], row["order_id"]) == (
            "action_required", "connected", order["id"]
        )
        wait_status(client, order["id"], "cancelled")
        service.wait_projections()
        (row,) = domains(client, domain="waiting.com")
        assert (row["status"], row["category"]) == ("available", "inventory")
