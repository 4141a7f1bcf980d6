"""Swapping out a pooled domain (services/pool/leaving.py): refused while the pool links it to a
workspace, else the domain leaves the pool together with its order, on both stores."""

from __future__ import annotations

from conftest import RunningService
from pool_support import add, attach, attached, conditions, pooled, released
from test_orders_sandbox import counts, error_of, new_workspace, placed
from test_swaps import of, rename, settled, swap


def test_swapping_a_pooled_domain_takes_it_out_of_the_pool(service: RunningService) -> None:
    with service.partner() as client:
        names = pooled(client, 2)
        order = {"id": client.get("/pool/domains").json()["data"][0]["order_id"]}
        reservation = attached(client, new_workspace(client), 1)
        [linked] = [d["domain"] for d in reservation["domains"]]
        [free] = [name for name in names if name != linked]

        refused = error_of(swap(client, of(order, linked)), 409, "pool_domains_linked")
        assert refused["field"] == "domain"
        assert refused["details"]["domains"] == [{"domain": linked, "condition": "assigned"}]
        renaming = rename(client, linked, [{"first_name": "Pool", "last_name": "Renamed"}])
        assert error_of(renaming, 409, "pool_domains_linked")["field"] == "domain"
        assert conditions(client) == {linked: "assigned", free: "available"}

        assert settled(client, swap(client, of(order, free)))["status"] == "completed"
        assert conditions(client) == {linked: "assigned"}
        service.wait_projections()
        removed = client.get("/events", params={"type": "pool.domain_removed"}).json()["data"]
        assert [e["data"]["domain"] for e in removed] == [free]

        # Released from the pool first, the linked one can be swapped too.
        assert released(client, linked)["status"] == "completed"
        assert conditions(client) == {linked: "available"}
        assert settled(client, swap(client, of(order, linked)))["status"] == "completed"
        assert conditions(client) == {}
        # Gone from the pool, the old domains cannot be attached any more.
        error_of(attach(client, new_workspace(client), 1), 409, "insufficient_inventory")


def test_an_order_whose_domain_the_pool_links_is_cancelled_only_once_released(
    service: RunningService,
) -> None:
    """A linked domain lends the workspace its order's inboxes: cancelling the order would free
    the name for the next order while the pool still hands it out."""
    with service.partner() as client:
        names = pooled(client, 2)
        order_id = client.get("/pool/domains").json()["data"][0]["order_id"]
        reservation = attached(client, new_workspace(client), 1)
        [linked] = [d["domain"] for d in reservation["domains"]]

        refused = error_of(client.post(f"/orders/{order_id}/cancel"), 409, "pool_domains_linked")
        assert refused["details"]["domains"] == [{"domain": linked, "condition": "assigned"}]
        assert client.get(f"/orders/{order_id}").json()["data"]["status"] == "completed"
        assert set(conditions(client)) == set(names)

        assert released(client, linked)["status"] == "completed"
        cancelled = client.post(f"/orders/{order_id}/cancel")
        assert cancelled.status_code == 200, cancelled.text
        assert cancelled.json()["data"]["status"] == "cancel_scheduled"
        # Both left the pool with their order: none is offered, none can be attached.
        service.wait_projections()
        assert conditions(client) == {}
        error_of(attach(client, new_workspace(client), 1), 409, "insufficient_inventory")


def test_the_pool_neither_takes_nor_lends_a_domain_a_swap_is_replacing(
    service: RunningService,
) -> None:
    """A swap under way takes its domain off the order when it completes: the pool refuses to
    add it meanwhile (`swap_in_progress`), and an attach does not lend it if it is pooled."""
    with service.partner() as client:
        names = pooled(client, 1)
        order = {"id": client.get("/pool/domains").json()["data"][0]["order_id"]}
        [swapping] = names
        imported = client.post("/domains/import", json={"domains": ["nsnever-poolswap.com"]})
        assert imported.status_code == 201, imported.text
        service.wait_projections()
        waiting = settled(client, swap(client, of(order, swapping, new_domain="nsnever-poolswap.com")))
        assert waiting["status"] == "action_required"
        error_of(attach(client, new_workspace(client), 1), 409, "insufficient_inventory")

        other = placed(client, counts(new_workspace(client), a=1))
        name = other["domains"][0]["domain"]
        imported = client.post("/domains/import", json={"domains": ["nsnever-poolswap2.com"]})
        assert imported.status_code == 201, imported.text
        service.wait_projections()
        held = settled(client, swap(client, of(other, name, new_domain="nsnever-poolswap2.com")))
        assert held["status"] == "action_required"
        refused = error_of(add(client, name), 409, "domains_not_submittable")
        assert refused["details"]["domains"] == [{"domain": name, "reason": "swap_in_progress"}]


def test_a_domain_the_pool_links_is_not_swapped_onto_another_order(
    service: RunningService,
) -> None:
    """Taken in as `new_domain`, the other order could never swap it out again (the link is
    the first order's)."""
    with service.partner() as client:
        pooled(client, 1)
        reservation = attached(client, new_workspace(client), 1)
        [linked] = [d["domain"] for d in reservation["domains"]]
        other = placed(client, counts(new_workspace(client), a=1))
        taking = of(other, other["domains"][0]["domain"], new_domain=linked)
        refused = error_of(swap(client, taking), 409, "pool_domains_linked")
        assert refused["field"] == "new_domain"
        assert refused["details"]["domains"] == [{"domain": linked, "condition": "assigned"}]
        assert conditions(client) == {linked: "assigned"}


def test_a_domain_of_a_cancelled_order_is_refused_for_the_pool_and_renames(
    service: RunningService,
) -> None:
    with service.partner() as client:
        order = placed(client, counts(new_workspace(client), a=1))
        name = order["domains"][0]["domain"]
        assert client.post(f"/orders/{order['id']}/cancel").status_code == 200
        refused = error_of(add(client, name), 409, "domains_not_submittable")
        assert refused["details"]["domains"] == [{"domain": name, "reason": "order_cancelled"}]
        service.wait_projections()
        renaming = rename(client, name, [{"first_name": "Ann", "last_name": "Lee"}])
        conflict = error_of(renaming, 409, "order_state_conflict")
        assert (conflict["field"], conflict["details"]) == ("domain", {"status": "cancel_scheduled"})
