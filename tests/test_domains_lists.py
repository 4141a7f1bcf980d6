"""Limits of `POST /domains/purchase` and of the domain list (every limit, filters and
pagination through HTTP)."""

from __future__ import annotations

import uuid

import httpx
from conftest import RunningService, ServiceFactory
from test_orders_sandbox import counts, error_of, new_workspace, placed
from test_wallet_purchase import buy, credit


def test_purchase_limits_and_permissions(service_factory: ServiceFactory) -> None:
    service = service_factory(fulfillment_step_seconds=600)  # no registration in this test
    org = service.new_org()
    credit(service, org, 50 * 1299)
    names = [f"bulk-{i}.com" for i in range(51)]
    with service.client(service.new_key(org, "live")) as live:
        assert error_of(buy(live, *names), 400, "invalid_request")["field"] == "domains"
        assert error_of(buy(live), 400, "invalid_request")["field"] == "domains"
        body = {"domains": [{"domain": "bulk-0.com"}]}
        error_of(live.post("/domains/purchase", json=body), 400, "idempotency_key_required")
        unknown = {"domains": [{"domain": "bulk-0.com", "years": 2}]}
        response = live.post(
            "/domains/purchase", json=unknown, headers={"Idempotency-Key": str(uuid.uuid4())}
        )
        assert error_of(response, 400, "invalid_request")["field"] == "domains[0].years"
        bought = buy(live, *names[:50])
        assert bought.status_code == 201, bought.text
        assert len(bought.json()["data"]["domains"]) == 50
        assert live.get("/wallet").json()["data"]["balance_cents"] == 0
    with service.client(service.new_key(org, "live", "limited")) as limited:
        error_of(buy(limited, "bulk-x.com"), 403, "forbidden")


def page_ids(client: httpx.Client, **params: object) -> list[list[str]]:
    pages = []
    response = client.get("/domains", params=params).json()
    while True:
        pages.append([row["id"] for row in response["data"]])
        following = response["links"]["next"]
        if following is None:
            return pages
        response = client.get(following.split("/partner/v1", 1)[-1]).json()


def test_domain_list_filters_and_pages(service: RunningService) -> None:
    with service.partner() as client:
        imported = client.post("/domains/import", json={"domains": ["own-a.com", "own-b.com"]})
        assert imported.status_code == 201, imported.text
        order = placed(client, counts(new_workspace(client), a=3))
        service.wait_projections()

        pages = page_ids(client, per_page=2)
        assert [len(p) for p in pages] == [2, 2, 1]
        every = [dom for page in pages for dom in page]
        assert len(set(every)) == 5
        connected = client.get("/domains", params={"category": "connected"}).json()["data"]
        assert sorted(r["id"] for r in connected) == sorted(d["id"] for d in order["domains"])
        assert all(r["order_id"] == order["id"] and r["provider"] == "suite_a" for r in connected)
        inventory = client.get("/domains", params={"category": "inventory"}).json()["data"]
        assert sorted(r["domain"] for r in inventory) == ["own-a.com", "own-b.com"]
        assert all("provider" not in r and "order_id" not in r for r in inventory)
        active = client.get("/domains", params={"status": "active"}).json()["data"]
        assert len(active) == 3
        (one,) = client.get("/domains", params={"domain": "own-a.com"}).json()["data"]
        assert client.get(f"/domains/{one['id']}").json()["data"] == one

        for params, field in (
            ({"per_page": 0}, "per_page"),
            ({"per_page": 101}, "per_page"),
            ({"category": "pool"}, "category"),
            ({"status": "warming"}, "status"),
            ({"page_token": "forged"}, "page_token"),
        ):
            bad = client.get("/domains", params=params)
            assert error_of(bad, 400, "invalid_request")["field"] == field
        error_of(client.get("/domains/dom_" + "0" * 32), 404, "not_found")
