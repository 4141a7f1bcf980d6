"""A domain a swap took off its order is the organization's inventory again: `GET /domains`
lists it `available`, and the next order or swap of that workspace picks it before buying a
new name. A premium swap's warm domain keeps its inboxes, so an order naming it gets other
addresses."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from conftest import RunningService, ServiceFactory
from sandbox_clock_support import advance
from test_domains_imports import events_of
from test_orders_live import wait_status
from test_orders_sandbox import counts, new_workspace, place, placed
from test_swaps import DAY, completed_order, of, settled, swap, wait_swap
from test_wallet_purchase import buy, credit

from audit.replay import replay


def inventory(client: httpx.Client, name: str) -> dict[str, Any]:
    (row,) = client.get("/domains", params={"domain": name}).json()["data"]
    return dict(row)


def swapped_out(client: httpx.Client) -> tuple[dict[str, Any], str]:
    """A completed order and the name a standard swap took off it."""
    order = completed_order(client)
    old = order["domains"][0]["domain"]
    done = settled(client, swap(client, of(order, old)))
    assert done["status"] == "completed", done
    row = inventory(client, old)
    assert (row["status"], row["category"]) == ("available", "inventory")
    return order, old


def test_an_order_picks_a_domain_a_swap_detached(service: RunningService) -> None:
    with service.partner() as client:
        order, old = swapped_out(client)
        workspace = order["destination"]["workspace_id"]
        quote = client.post("/quotes", json=counts(workspace, a=1)).json()["data"]
        assert (quote["domains_to_register"], quote["domains_from_inventory"]) == (0, 1)
        again = placed(client, counts(workspace, a=1))
        assert [(d["domain"], d["source"]) for d in again["domains"]] == [(old, "inventory")]
        assert inventory(client, old)["order_id"] == again["id"]
    c = service.container
    replayed = replay(c.settings, c.store, c.read_models)
    assert replayed.identical, replayed.as_json()


def test_a_swap_without_new_domain_picks_a_domain_a_swap_detached(service: RunningService) -> None:
    with service.partner() as client:
        order, old = swapped_out(client)
        current = client.get(f"/orders/{order['id']}").json()["data"]["domains"][0]["domain"]
        done = settled(client, swap(client, of(order, current)))
        assert (done["new_domain"], done["new_domain_source"]) == (old, "inventory")
        assert done["price_cents"] == 0
        service.wait_projections()
        # Its `domain.connected` says where it came from as `GET /domains` does.
        connected = [e["data"] for e in events_of(client, "domain.connected")
                     if e["data"]["domain"] == old]
        assert inventory(client, old)["source"] == "generated"
        assert [c["source"] for c in connected] == ["generated", "generated"], connected


def test_a_swapped_in_name_taken_off_before_is_on_the_order_again(service: RunningService) -> None:
    with service.partner() as client:
        order, old = swapped_out(client)
        current = client.get(f"/orders/{order['id']}").json()["data"]["domains"][0]["domain"]
        back = settled(client, swap(client, of(order, current, new_domain=old)))
        assert back["status"] == "completed", back
        row = inventory(client, old)
        assert (row["category"], row["order_id"]) == ("connected", order["id"])
        # On the order, it is no free inventory: a new order buys a name.
        quote = client.post(
            "/quotes", json=counts(order["destination"]["workspace_id"], a=1)
        ).json()["data"]
        assert quote["domains_from_inventory"] == 1  # the name swapped out just now
        assert quote["domains_to_register"] == 0


def test_a_warm_domain_named_on_an_order_gets_other_addresses(service: RunningService) -> None:
    with service.partner() as client:
        order = completed_order(client)
        old = order["domains"][0]
        warm = settled(client, swap(client, of(order, old["domain"], "premium")))
        assert warm["old_domain_status"] == "warm"
        held = {inbox["address"] for inbox in old["inboxes"]}
        named = placed(client, counts(
            order["destination"]["workspace_id"], a=1,
            domains=[{"domain": old["domain"], "suite": "suite_a"}],
            personas=[{"first_name": "Ann", "last_name": "Lee"}],
        ))
        addresses = {inbox["address"] for inbox in named["domains"][0]["inboxes"]}
        assert addresses and not addresses & held
        # The warm period over, the order that named it keeps it.
        advance(client, seconds=15 * DAY)
        assert inventory(client, old["domain"])["order_id"] == named["id"]


def test_an_imported_domain_swapped_in_keeps_auto_renew_off(service: RunningService) -> None:
    """decisions 6: imported domains renew with the customer's registrar, never here."""
    with service.partner() as client:
        order = completed_order(client)
        imported = client.post("/domains/import", json={"domains": ["keptmine.com"]})
        assert imported.status_code == 201, imported.text
        done = settled(client, swap(client, of(order, order["domains"][0]["domain"],
                                               new_domain="keptmine.com")))
        assert done["status"] == "completed", done
        assert inventory(client, "keptmine.com")["auto_renew"] is False
        on_order = client.get(f"/orders/{order['id']}").json()["data"]["domains"]
        assert [d["auto_renew"] for d in on_order if d["domain"] == "keptmine.com"] == [False]


def test_an_owned_domain_a_live_swap_brings_in_is_in_progress_meanwhile(
    service_factory: ServiceFactory,
) -> None:
    """Spec 2.4: `available` is free inventory, `in_progress` a domain being set up. While a
    live swap sets up an owned domain it is not free; a failed swap gives it back."""
    service = service_factory(fulfillment_step_seconds=0.4)
    org = service.new_org()
    credit(service, org, 50_000)
    with service.client(service.new_key(org, "live")) as live:
        response = place(live, counts(new_workspace(live), a=2))
        order = wait_status(live, response.json()["data"]["id"], "completed", timeout=30)
        first, second = (d["domain"] for d in order["domains"])
        spare = f"spare{uuid.uuid4().hex[:8]}.com"
        bought = buy(live, spare, "mailfail-spare.com")
        wait_status(live, bought.json()["data"]["id"], "completed", timeout=30)
        service.wait_projections()

        def row(name: str) -> tuple[str, str]:
            service.wait_projections()
            (found,) = live.get("/domains", params={"domain": name}).json()["data"]
            return found["status"], found["category"]

        assert row(spare) == ("available", "inventory")
        taking = swap(live, of(order, first, new_domain=spare)).json()["data"]
        assert row(spare) == ("in_progress", "inventory")
        wait_swap(live, taking["id"], lambda s: s["status"] == "completed")
        assert row(spare) == ("active", "connected")

        doomed = swap(live, of(order, second, new_domain="mailfail-spare.com")).json()["data"]
        assert row("mailfail-spare.com") == ("in_progress", "inventory")
        wait_swap(live, doomed["id"], lambda s: s["status"] == "failed")
        assert row("mailfail-spare.com") == ("available", "inventory")
