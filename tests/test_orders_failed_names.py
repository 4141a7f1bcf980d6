"""A name that only failed orders ever had was bought and refunded each time: it was never the
organization's, so naming it on a later order buys it again (quoted, charged, registered),
while a name the organization owned before an order broke with it stays free to name."""

from __future__ import annotations

from typing import Any

import httpx
from conftest import RunningService, ServiceFactory
from grpc_support import grpc_service
from test_grpc_fulfillment import FAILED, live_order, report
from test_orders_sandbox import counts, place
from test_wallet_purchase import buy

from infra.clock import ManualClock


def registered_then_failed(service: RunningService) -> tuple[str, dict[str, Any], str]:
    """A live order whose domain was registered, then failed by the operator: (key, order,
    the order's domain)."""
    order_id, _, secret = live_order(service)
    assert report(service, order_id, "register").applied
    given_up = report(service, order_id, "dns", FAILED, reason="dns provider gone", fail_order=True)
    assert given_up.order_status == "failed"
    service.wait_projections()
    with service.client(secret) as live:
        order: dict[str, Any] = live.get(f"/orders/{order_id}").json()["data"]
    assert order["refunded_cents"] == order["charged_cents"] > 0
    return secret, order, order["domains"][0]["domain"]


def named_on(workspace: str, name: str) -> dict[str, Any]:
    return counts(workspace, a=1, domains=[{"domain": name, "suite": "suite_a"}])


def workspace_of(order: dict[str, Any]) -> str:
    return str(order["destination"]["workspace_id"])


def balance(client: httpx.Client) -> int:
    return int(client.get("/wallet").json()["data"]["balance_cents"])


def test_a_refunded_name_named_again_is_bought_again(service_factory: ServiceFactory) -> None:
    service = grpc_service(service_factory, clock=ManualClock())
    secret, failed, name = registered_then_failed(service)
    registration = next(
        line["amount_cents"] for line in failed["price"]["lines"]
        if line["type"] == "domain_registration"
    )
    with service.client(secret) as live:
        body = named_on(workspace_of(failed), name)
        quote = live.post("/quotes", json=body).json()["data"]
        assert quote["domains_to_register"] == 1 and quote["domains_from_inventory"] == 0
        assert {"type": "domain_registration", "domain": name}.items() <= next(
            line for line in quote["lines"] if line["type"] == "domain_registration"
        ).items()
        before = balance(live)
        response = place(live, body)
        assert response.status_code == 201, response.text
        again = response.json()["data"]
        assert again["price"]["total_cents"] == quote["total_cents"]
        assert [d["domain"] for d in again["domains"]] == [name]
        assert balance(live) == before - quote["total_cents"]
        assert quote["total_cents"] == failed["price"]["total_cents"]  # registration included
        assert registration > 0


def test_an_owned_name_that_broke_an_order_stays_free(service_factory: ServiceFactory) -> None:
    service = grpc_service(service_factory, clock=ManualClock())
    order_id, _, secret = live_order(service)
    with service.client(secret) as live:
        bought = buy(live, "ownedbefore.com")
        assert bought.status_code == 201, bought.text
    # A purchase's one step, reported by the operator (this service runs no worker).
    assert report(service, bought.json()["data"]["id"], "register").order_status == "completed"
    service.wait_projections()
    with service.client(secret) as live:
        body = named_on(workspace_of(live.get(f"/orders/{order_id}").json()["data"]), "ownedbefore.com")
        broken = place(live, body)
        assert broken.status_code == 201, broken.text
    given_up = report(
        service, broken.json()["data"]["id"], "register", FAILED, reason="broke", fail_order=True
    )
    assert given_up.order_status == "failed"
    service.wait_projections()
    with service.client(secret) as live:
        quote = live.post("/quotes", json=body).json()["data"]
        assert quote["domains_to_register"] == 0 and quote["domains_from_inventory"] == 1
        assert not [line for line in quote["lines"] if line["type"] == "domain_registration"]
