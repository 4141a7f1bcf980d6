"""Concurrent swaps of one domain of an order: one is accepted, the others are refused at once
with 409 `conflict` (the acceptance marks the domain on the order in the same save, so the
racers lose the order's version race and re-run), on both stores.

The new domains are imported ones whose nameservers never point, so the winner stays open
(`action_required`) while the others are decided.
"""

from __future__ import annotations

import uuid
from typing import Any

from conftest import RunningService, ServiceFactory
from test_orders_domain_lock import race
from test_orders_live import wait_status
from test_orders_sandbox import counts, error_of, new_workspace, placed
from test_swaps import completed_order, of, settled
from test_wallet_purchase import credit

RACERS = 4


def swap_in(client: Any, order: dict[str, Any], new_name: str, index: int = 0) -> Any:
    """POST /swaps of the order's `index`th domain for `new_name`."""
    return client.post("/swaps", json=of(order, order["domains"][index]["domain"],
                                          new_domain=new_name),
                       headers={"Idempotency-Key": str(uuid.uuid4())})


def order_naming(client: Any, workspace: str, name: str) -> Any:
    return client.post("/orders", json={
        "destination": {"workspace_id": workspace},
        "suite_a": {"domains": 1, "inboxes_per_domain": 1},
        "domains": [{"domain": name, "suite": "suite_a"}],
    }, headers={"Idempotency-Key": str(uuid.uuid4())})


def test_concurrent_swaps_of_one_domain_one_is_accepted(service: RunningService) -> None:
    org = service.new_org()
    secret = service.new_key(org, "test")
    new_names = [f"nsnever-race{i}.com" for i in range(RACERS)]
    with service.client(secret) as client:
        order = completed_order(client)
        imported = client.post("/domains/import", json={"domains": new_names})
        assert imported.status_code == 201, imported.text
        old = order["domains"][0]["domain"]
    service.wait_projections()

    bodies = [of(order, old, new_domain=name) for name in new_names]
    responses = race(service, secret, bodies, path="/swaps")
    won = [r for r in responses if r.status_code == 201]
    assert len(won) == 1, [r.text for r in responses]
    for lost in (r for r in responses if r.status_code != 201):
        assert error_of(lost, 409, "conflict")["field"] == "domain"

    with service.client(secret) as client:
        assert settled(client, won[0])["status"] == "action_required"
        # Still refused once the racers are done; the other domain of the order is free.
        assert error_of(client.post(
            "/swaps", json=bodies[0], headers={"Idempotency-Key": str(uuid.uuid4())}
        ), 409, "conflict")["field"] == "domain"
        service.wait_projections()  # the list is a projection
        swaps = client.get("/swaps").json()["data"]
        assert [s["id"] for s in swaps if s["status"] != "failed"] == [won[0].json()["data"]["id"]]


def test_a_new_domain_is_held_by_its_swap_until_the_swap_ends(service: RunningService) -> None:
    """The name a swap brings in shows on the order only once the swap completes; meanwhile
    the swap holds its placement lock, so another swap or an order naming it is refused
    instead of both getting it."""
    org = service.new_org()
    secret = service.new_key(org, "test")
    name = f"nsnever-held{uuid.uuid4().hex[:6]}.com"
    with service.client(secret) as client:
        first, second = completed_order(client), completed_order(client)
        assert client.post("/domains/import", json={"domains": [name]}).status_code == 201
        service.wait_projections()
        taken = swap_in(client, first, name)
        assert settled(client, taken)["status"] == "action_required"  # open: never pointed
        again = swap_in(client, second, name)
        assert error_of(again, 409, "domain_already_in_active_order")["field"] == "new_domain"
        ordered = order_naming(client, first["destination"]["workspace_id"], name)
        assert error_of(ordered, 409, "domain_already_in_active_order")


def test_two_live_swaps_cannot_buy_the_same_name(service_factory: ServiceFactory) -> None:
    """A bought name is held (by the swap, and across organizations) while the live swap
    runs its steps: a second swap naming it is refused and charged nothing."""
    service = service_factory(fulfillment_step_seconds=0.3)  # the first swap stays open
    org = service.new_org()
    credit(service, org, 10_000_000)
    secret = service.new_key(org, "live")
    name = f"zzbuy{uuid.uuid4().hex[:8]}.com"
    with service.client(secret) as client:
        order = client.post("/orders", json=counts(new_workspace(client), a=2),
                            headers={"Idempotency-Key": str(uuid.uuid4())}).json()["data"]
        order = wait_status(client, order["id"], "completed")
        before = client.get("/wallet").json()["data"]["balance_cents"]
        first = swap_in(client, order, name)
        assert first.status_code == 201, first.text
        second = swap_in(client, order, name, index=1)
        assert error_of(second, 409, "domain_already_in_active_order")["field"] == "new_domain"
        charged = before - client.get("/wallet").json()["data"]["balance_cents"]
        assert charged == first.json()["data"]["price_cents"] > 0


def test_a_completed_swap_no_longer_holds_its_new_domain(service: RunningService) -> None:
    """The swap's hold on its new name ends with the swap: once it completes, the name is on
    a completed order, which does not keep it from another order (spec 2.5)."""
    org = service.new_org()
    secret = service.new_key(org, "test")
    name = f"freed{uuid.uuid4().hex[:8]}.com"
    with service.client(secret) as client:
        order = completed_order(client)
        assert client.post("/domains/import", json={"domains": [name]}).status_code == 201
        service.wait_projections()
        swapped = swap_in(client, order, name)
        assert settled(client, swapped)["status"] == "completed"
        service.wait_projections()
        ordered = order_naming(client, order["destination"]["workspace_id"], name)
        assert ordered.status_code == 201, ordered.text


def test_swaps_racing_for_the_inventory_they_choose_each_get_a_domain(
    service: RunningService,
) -> None:
    """A new domain the service chose from inventory and another request took meanwhile is
    chosen again (the next free one, then a new name), never a 409 on `new_domain`, a
    property the partner did not send."""
    org = service.new_org()
    secret = service.new_key(org, "test")
    with service.client(secret) as client:
        workspace = new_workspace(client)
        orders = [placed(client, counts(workspace, a=1)) for _ in range(RACERS)]
        spare = [f"spare{uuid.uuid4().hex[:8]}.com" for _ in range(2)]
        bought = client.post("/domains/purchase", json={
            "domains": [{"domain": name} for name in spare], "workspace_id": workspace,
        }, headers={"Idempotency-Key": str(uuid.uuid4())})
        assert bought.status_code == 201, bought.text
        wait_status(client, bought.json()["data"]["id"], "completed")
    service.wait_projections()

    bodies = [of(order, order["domains"][0]["domain"]) for order in orders]
    responses = race(service, secret, bodies, path="/swaps")
    assert [r.status_code for r in responses] == [201] * RACERS, [r.text for r in responses]
    with service.client(secret) as client:
        done = [settled(client, response) for response in responses]
    new_names = [swap["new_domain"] for swap in done]
    assert all(swap["status"] == "completed" for swap in done), done
    assert len(set(new_names)) == RACERS and set(spare) <= set(new_names)


def test_a_swap_takes_a_name_completed_orders_send_from_as_an_order_would(
    service: RunningService,
) -> None:
    """Spec 2.5: a name a completed suite_a order uses is usable for both suites, so a swap may
    bring it in as an order naming it may; its new mailboxes keep clear of the addresses the
    other order holds. A name already on the swapped order is refused."""
    org = service.new_org()
    secret = service.new_key(org, "test")
    with service.client(secret) as client:
        holder, swapped = completed_order(client), completed_order(client, a=2)
        shared = holder["domains"][0]["domain"]
        service.wait_projections()
        same_order = swap_in(client, swapped, swapped["domains"][1]["domain"])
        assert error_of(same_order, 400, "invalid_request")["field"] == "new_domain"

        done = settled(client, swap_in(client, swapped, shared))
        assert done["status"] == "completed", done
        service.wait_projections()
        after = client.get(f"/orders/{swapped['id']}").json()["data"]
        theirs = client.get(f"/orders/{holder['id']}").json()["data"]
    mine = next(d for d in after["domains"] if d["domain"] == shared)
    kept = next(d for d in theirs["domains"] if d["domain"] == shared)
    addresses = {inbox["address"] for inbox in mine["inboxes"]}
    assert mine["status"] == "active" and len(addresses) == 3
    assert addresses.isdisjoint(inbox["address"] for inbox in kept["inboxes"])
