"""Concurrent orders naming the same domain: exactly one wins, on both stores.

The orders stay `action_required` (a private profile picture), so the winner still holds the
domain when the others are decided; the read-model check alone lets racing requests through,
the placement lock (`domain.domain_claims`) does not.
"""

from __future__ import annotations

from typing import Any

import httpx
from conftest import RunningService, ServiceFactory
from test_orders_live import wait_status
from test_orders_sandbox import counts, error_of, new_workspace, settled
from test_spec_audit_races import fire
from test_wallet_purchase import buy, credit

RACERS = 6


def race(
    service: RunningService, secret: str, bodies: list[dict[str, Any]], path: str = "/orders"
) -> list[httpx.Response]:
    """POST every body to `path` at once, each from its own thread and connection."""
    return fire(service, [(secret, "POST", path, body) for body in bodies])


def test_concurrent_orders_naming_one_domain_one_wins(service: RunningService) -> None:
    org = service.new_org()
    secret = service.new_key(org, "test")
    with service.client(secret) as client:
        imported = client.post("/domains/import", json={"domains": ["contended.com"]})
        assert imported.status_code == 201, imported.text
        workspace = new_workspace(client)
    service.wait_projections()
    body = counts(
        workspace,
        a=1,
        domains=[{"domain": "contended.com", "suite": "suite_a"}],
        profile_picture_url="https://localhost/me.png",
    )
    responses = race(service, secret, [body] * RACERS)
    won = [r for r in responses if r.status_code == 201]
    assert len(won) == 1, [r.text for r in responses]
    with service.client(secret) as client:
        assert settled(client, won[0])["status"] == "action_required"
    for lost in responses:
        if lost is not won[0]:
            error = error_of(lost, 409, "domain_already_in_active_order")
            assert error["field"] == "domains[0].domain"
    service.wait_projections()  # the list is a projection
    with service.client(secret) as client:
        orders = client.get("/orders").json()["data"]
        assert [o["id"] for o in orders] == [won[0].json()["data"]["id"]]


def test_concurrent_orders_drawing_inventory_never_share_a_domain(
    service_factory: ServiceFactory,
) -> None:
    service = service_factory(fulfillment_step_seconds=0.05)
    org = service.new_org()
    credit(service, org, 100_000)
    secret = service.new_key(org, "live")
    with service.client(secret) as client:
        workspace = new_workspace(client)
        bought = buy(client, "stock-one.com", "stock-two.com").json()["data"]
        wait_status(client, bought["id"], "completed")
    service.wait_projections()
    body = counts(workspace, a=1, profile_picture_url="https://localhost/me.png")
    responses = race(service, secret, [body] * 4)
    assert all(r.status_code == 201 for r in responses), [r.text for r in responses]
    taken = [r.json()["data"]["domains"][0] for r in responses]
    from_stock = sorted(d["domain"] for d in taken if d["source"] == "inventory")
    assert from_stock == ["stock-one.com", "stock-two.com"]
