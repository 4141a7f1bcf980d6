"""Wallet credits (CLI), live charges, the all-or-nothing purchase, sandbox untouched."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
from conftest import RunningService
from test_orders_sandbox import error_of, wait_order

from cli.main import COMMANDS, _load_extensions, build_parser


def credit(service: RunningService, org: str, cents: int) -> dict[str, Any]:
    _load_extensions()
    args = build_parser().parse_args(["wallet", "credit", org, str(cents)])
    result: dict[str, Any] = COMMANDS[("wallet", "credit")](args, service.container)
    json.dumps(result)
    return result


def buy(client: httpx.Client, *names: str, key: str | None = None) -> httpx.Response:
    body = {"domains": [{"domain": n, "auto_renew": False} for n in names]}
    return client.post(
        "/domains/purchase", json=body, headers={"Idempotency-Key": key or str(uuid.uuid4())}
    )


def test_purchase_charges_the_wallet_all_or_nothing(service: RunningService) -> None:
    org = service.new_org()
    assert credit(service, org, 2000) == {"org_id": org, "balance_cents": 2000}
    with service.client(service.new_key(org, "live")) as live:
        assert live.get("/wallet").json()["data"]["balance_cents"] == 2000
        refused = buy(live, "alpha-one.com", "alpha-two.com")  # 2 x 1299 > 2000
        error_of(refused, 402, "insufficient_funds")
        assert live.get("/wallet").json()["data"]["balance_cents"] == 2000
        assert live.get("/orders").json()["data"] == []
        error_of(buy(live, "is-taken.com"), 409, "domains_not_submittable")
        error_of(buy(live, "premiumx.com"), 400, "premium_domain_not_supported")

        bought = buy(live, "alpha-one.com", key="p1")
        assert bought.status_code == 201, bought.text
        order = bought.json()["data"]
        assert order["type"] == "purchase" and order["status"] == "in_progress"
        assert order["domains"][0]["provider"] is None
        assert order["domains"][0]["auto_renew"] is False
        assert buy(live, "alpha-one.com", key="p1").json()["data"]["id"] == order["id"]
        wallet = live.get("/wallet").json()["data"]
        assert wallet["balance_cents"] == 2000 - 1299
        assert [e["type"] for e in wallet["entries"]] == ["charge", "credit"]
        assert wallet["entries"][0]["order_id"] == order["id"]
        assert [o["id"] for o in live.get("/orders").json()["data"]] == [order["id"]]



def test_sandbox_purchase_answers_and_notifies_as_live_without_billing(
    service_factory: Any,
) -> None:
    """Decisions 5: a sandbox purchase answers its order `in_progress`, completes at once with
    the same webhooks as live, bills nothing, and holds its names in the sandbox only."""
    service = service_factory(fulfillment_step_seconds=0.05)
    org = service.new_org()
    credit(service, org, 5000)
    seen: dict[str, tuple[str, list[str]]] = {}
    for environment in ("test", "live"):
        with service.client(service.new_key(org, environment)) as client:
            answer = buy(client, "beta-bought.com")
            assert answer.status_code == 201, answer.text
            first = answer.json()["data"]
            done = wait_order(client, first["id"])
            assert done["status"] == "completed" and done["type"] == "purchase"
            service.wait_projections()
            rows = client.get("/domains", params={"domain": "beta-bought.com"}).json()["data"]
            assert [r["status"] for r in rows] == ["available"], rows
            events = client.get("/events", params={"per_page": 100}).json()["data"]
            seen[environment] = (first["status"], [e["type"] for e in reversed(events)])
            if environment == "test":
                wallet = client.get("/wallet").json()["data"]
                assert wallet["balance_cents"] == 0 and wallet["entries"] == []
                assert first["price"]["total_cents"] == 1299  # quoted as live, never charged
                domain = client.get(f"/domains/{rows[0]['id']}").json()["data"]
                kinds = {r["type"] for r in domain["dns_records"]}
                assert {"MX", "TXT"} <= kinds, domain
                assert any(r["value"].startswith("v=DKIM1") for r in domain["dns_records"])
                again = buy(client, "beta-bought.com")
                refusal = error_of(again, 409, "domains_not_submittable")
                assert refusal["details"]["domains"] == [
                    {"domain": "beta-bought.com", "reason": "already_owned"}
                ]
    assert seen["test"] == seen["live"] == ("in_progress", ["order.in_progress", "order.completed"])
    with service.client(service.new_key(org, "live")) as live:
        assert live.get("/wallet").json()["data"]["balance_cents"] == 5000 - 1299


def test_wallet_ledger_is_paged_like_every_list(service: RunningService) -> None:
    org = service.new_org()
    for cents in range(1, 31):
        credit(service, org, cents)
    with service.client(service.new_key(org, "live")) as live:
        first = live.get("/wallet", params={"per_page": 20}).json()
        assert [e["amount_cents"] for e in first["data"]["entries"]] == list(range(30, 10, -1))
        assert first["meta"]["returned"] == 20 and first["meta"]["per_page"] == 20
        assert first["data"]["balance_cents"] == sum(range(1, 31))
        second = live.get(first["links"]["next"]).json()
        assert [e["amount_cents"] for e in second["data"]["entries"]] == list(range(10, 0, -1))
        assert second["links"]["next"] is None
        assert second["data"]["balance_cents"] == first["data"]["balance_cents"]
        default = live.get("/wallet").json()
        assert default["meta"]["per_page"] == 25 and default["meta"]["returned"] == 25
        for params, field in (({"per_page": 0}, "per_page"), ({"page_token": "x"}, "page_token")):
            refused = live.get("/wallet", params=params)
            assert refused.status_code == 400, refused.text
            assert refused.json()["error"]["field"] == field
