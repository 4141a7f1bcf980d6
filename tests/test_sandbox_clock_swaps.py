"""A premium swap's 14 warm days end on the sandbox clock (decisions.md 6)."""

from __future__ import annotations

from conftest import ServiceFactory
from sandbox_clock_support import advance
from test_swaps import DAY, completed_order, of, settled, swap

from infra.clock import ManualClock, iso

START = 1_800_000_000.0


def test_advance_past_the_warm_period_detaches_the_old_domain(
    service_factory: ServiceFactory,
) -> None:
    service = service_factory(clock=ManualClock(START))
    with service.partner() as client:
        order = completed_order(client)
        advance(client, seconds=3600)  # the swap happens on the moved clock
        old = order["domains"][0]["domain"]
        done = settled(client, swap(client, of(order, old, "premium", new_domain="fresh-name.com")))
        assert done["old_domain_status"] == "warm"
        assert done["warm_until"] == iso(START + 3600 + 14 * DAY)
        # Bought by the swap: its year (and renewal) starts then, not with the order.
        service.wait_projections()
        (bought,) = client.get("/domains", params={"domain": "fresh-name.com"}).json()["data"]
        assert bought["created_at"] == iso(START + 3600)
        assert advance(client, seconds=14 * DAY - 1)["came_due"]["warm_periods"] == 0
        assert client.get(f"/swaps/{done['id']}").json()["data"]["old_domain_status"] == "warm"
        moved = advance(client, seconds=1)
        assert moved["came_due"]["warm_periods"] == 1
        detached = client.get(f"/swaps/{done['id']}").json()["data"]
        assert detached["old_domain_status"] == "detached"
        assert detached["old_domain_detached_at"] == done["warm_until"]
        service.wait_projections()
        view = client.get(f"/orders/{order['id']}").json()["data"]
        assert view["warm_domains"] == []
        rows = client.get("/domains", params={"domain": old}).json()["data"]
        assert [(d["status"], d["category"]) for d in rows] == [("available", "inventory")]
        assert advance(client, seconds=DAY)["came_due"]["warm_periods"] == 0


def test_a_lapse_fails_the_open_swap_of_its_domain(service_factory: ServiceFactory) -> None:
    """A swap waiting on the partner (nameservers never pointed) cannot complete once its
    domain lapsed off the order: it fails then, not whenever it would have resumed."""
    service = service_factory(clock=ManualClock(START))
    with service.partner() as client:
        order = completed_order(client)
        old = order["domains"][0]["domain"]
        imported = client.post("/domains/import", json={"domains": ["nsnever-lapse.com"]})
        assert imported.status_code == 201, imported.text
        waiting = settled(client, swap(client, of(order, old, new_domain="nsnever-lapse.com")))
        assert waiting["status"] == "action_required"
        service.wait_projections()
        (row,) = client.get("/domains", params={"domain": old}).json()["data"]
        off = client.patch(f"/domains/{row['id']}", json={"auto_renew": False})
        assert off.status_code == 200, off.text
        assert advance(client, seconds=366 * DAY)["came_due"]["lapses"] == 1
        failed = client.get(f"/swaps/{waiting['id']}").json()["data"]
        assert failed["status"] == "failed" and "lapsed" in failed["reason"]


def test_a_warm_domain_that_lapses_is_detached_then(service_factory: ServiceFactory) -> None:
    """A premium swap's kept-warm domain whose year ends inside the warm period leaves with its
    lapse: the swap shows it detached then, and the warm period's end has nothing to do."""
    service = service_factory(clock=ManualClock(START))
    with service.partner() as client:
        order = completed_order(client)
        old = order["domains"][0]
        off = client.patch(f"/domains/{old['id']}", json={"auto_renew": False})
        assert off.status_code == 200, off.text
        advance(client, seconds=360 * DAY)
        done = settled(client, swap(client, of(order, old["domain"], "premium")))
        assert done["old_domain_status"] == "warm"
        assert advance(client, seconds=7 * DAY)["came_due"]["lapses"] == 1
        lapsed = client.get(f"/swaps/{done['id']}").json()["data"]
        assert lapsed["old_domain_status"] == "detached", lapsed
        assert lapsed["old_domain_detached_at"] < done["warm_until"]
        assert advance(client, seconds=14 * DAY)["came_due"]["warm_periods"] == 0


def test_a_cancelled_order_lets_its_warm_domain_go_with_the_others(
    service_factory: ServiceFactory,
) -> None:
    """The cancelled order no longer sends on the premium swap's old domain: it is released
    with the order's own (listed in `released_domains`), and the swap says it is detached."""
    service = service_factory(clock=ManualClock(START))
    with service.partner() as client:
        order = completed_order(client)
        old = order["domains"][0]["domain"]
        done = settled(client, swap(client, of(order, old, "premium", new_domain="kept-new.com")))
        assert done["old_domain_status"] == "warm"
        assert client.post(f"/orders/{order['id']}/cancel").status_code == 200
        came_due = advance(client, seconds=DAY)["came_due"]
        assert (came_due["grace_windows"], came_due["warm_periods"]) == (1, 0)
        view = client.get(f"/orders/{order['id']}").json()["data"]
        assert view["status"] == "cancelled" and view["warm_domains"] == []
        assert {d["domain"]: d["status"] for d in view["domains"]} == {
            "kept-new.com": "available", old: "available"
        }
        detached = client.get(f"/swaps/{done['id']}").json()["data"]
        assert detached["old_domain_status"] == "detached"
        service.wait_projections()
        for name in (old, "kept-new.com"):
            rows = client.get("/domains", params={"domain": name}).json()["data"]
            assert [(d["status"], d["category"]) for d in rows] == [("available", "inventory")]
        cancelled = client.get("/events", params={"type": "order.cancelled"}).json()["data"]
        assert sorted(cancelled[0]["data"]["released_domains"]) == sorted([old, "kept-new.com"])
        # The warm period's end finds nothing left to detach.
        assert advance(client, seconds=14 * DAY)["came_due"]["warm_periods"] == 0
