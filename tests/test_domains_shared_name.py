"""One name serving two orders at once (spec 2.5: a suite_a user leaves the name usable for
suite_b), and whose use narrows `usable_for`: only the asking organization's own, in its own
environment."""

from __future__ import annotations

from typing import Any

import httpx
from conftest import RunningService, ServiceFactory
from test_domains_inventory import domains, forward
from test_orders_codes_events import advance_until
from test_orders_sandbox import counts, new_workspace, placed
from test_swaps import settled

from infra.clock import ManualClock


def _availability(client: httpx.Client, name: str) -> dict[str, Any]:
    response = client.post("/domains/availability", json={"domains": [name]})
    assert response.status_code == 200, response.text
    row: dict[str, Any] = response.json()["data"]["domains"][0]
    return row


def _shared(client: httpx.Client) -> tuple[str, str, str]:
    """(name, the suite_a order, the suite_b order), both completed on the same name."""
    workspace = new_workspace(client)
    first = placed(client, counts(workspace, a=1))
    name = first["domains"][0]["domain"]
    named = [{"domain": name, "suite": "suite_b"}]
    second = placed(client, counts(workspace, a=0, b=1, domains=named))
    return name, first["id"], second["id"]


def test_cancelling_one_of_two_orders_on_a_name_leaves_it_connected_to_the_other(
    service_factory: ServiceFactory,
) -> None:
    clock = ManualClock()
    service = service_factory(clock=clock, cancel_grace_seconds=30)
    with service.partner() as client:
        name, kept, cancelled = _shared(client)
        assert client.post(f"/orders/{cancelled}/cancel").status_code == 200
        advance_until(client, clock, cancelled, "cancelled", step=31)
        service.wait_projections()
        (row,) = domains(client, domain=name)
        assert (row["status"], row["category"], row["order_id"]) == ("active", "connected", kept)
        assert row["provider"] == "suite_a" and row["usable_for"] == ["suite_a", "suite_b"]
        assert client.get(f"/orders/{kept}").json()["data"]["status"] == "completed"
        # The cancelled order released nothing: the name stays with the other order, and the
        # cancelled one shows it as it is there.
        gone = client.get(f"/orders/{cancelled}").json()["data"]
        assert [(d["domain"], d["status"]) for d in gone["domains"]] == [(name, "active")]
        released = _cancelled_event(client, cancelled)["data"]["released_domains"]
        assert released == []

        assert client.post(f"/orders/{kept}/cancel").status_code == 200
        advance_until(client, clock, kept, "cancelled", step=31)
        service.wait_projections()
        (row,) = domains(client, domain=name)
        assert (row["status"], row["category"]) == ("available", "inventory")
        assert "order_id" not in row
        assert _cancelled_event(client, kept)["data"]["released_domains"] == [name]


def _cancelled_event(client: httpx.Client, order_id: str) -> dict[str, Any]:
    events = client.get("/events", params={"type": "order.cancelled", "per_page": 100}).json()
    (event,) = [e for e in events["data"] if e["data"]["id"] == order_id]
    return event


def test_usable_for_counts_only_the_asking_organizations_own_use(service: RunningService) -> None:
    with service.partner() as client:
        name, _, _ = _shared(client)  # suite_b uses it here
        assert _availability(client, name)["usable_for"] == ["suite_a"]
    live_org = service.new_org()
    with service.client(service.new_key(live_org, "live")) as other:
        row = _availability(other, name)  # sandbox use never narrows a live name
        assert (row["available"], row["usable_for"]) == (True, ["suite_a", "suite_b"])
        generated = other.post(
            "/domains/generate", json={"keywords": [name.removesuffix(".com")], "prefixes": []}
        )
        assert generated.status_code == 200, generated.text
        names = [n for group in generated.json()["data"]["domains"] for n in group["domains"]]
        assert name in names


def test_swapping_a_shared_name_off_one_order_leaves_it_with_the_other(
    service: RunningService,
) -> None:
    with service.partner() as client:
        name, kept, swapped_from = _shared(client)
        swap = client.post(
            "/swaps", json={"order_id": swapped_from, "domain": name, "type": "standard"}
        )
        assert settled(client, swap)["status"] == "completed"
        service.wait_projections()
        (row,) = domains(client, domain=name)
        assert (row["status"], row["category"], row["order_id"]) == ("active", "connected", kept)


def test_a_second_order_on_a_name_gets_mailboxes_of_its_own(service: RunningService) -> None:
    """Two orders sharing a name each hold their own mailboxes: the second one's personas,
    the same as the first's, get numbered addresses instead of the first order's."""
    with service.partner() as client:
        first = placed(client, counts(new_workspace(client), a=1))
        name = first["domains"][0]["domain"]
        named = [{"domain": name, "suite": "suite_a"}]
        second = placed(client, counts(new_workspace(client), a=1, domains=named))
        assert second["status"] == "completed", second
        held = {i["address"] for i in first["domains"][0]["inboxes"]}
        (domain,) = second["domains"]
        addresses = [i["address"] for i in domain["inboxes"]]
        assert len(addresses) == 3 and not held & set(addresses), (held, addresses)
        assert all(a.endswith(f"@{name}") for a in addresses)


def test_forwarding_a_shared_name_reaches_both_of_its_orders(service: RunningService) -> None:
    """One `dom_` on a suite_a and a suite_b order: a forwarding job sets the URL on both, so
    neither order (nor the domain list, whichever it links) shows another URL."""
    with service.partner() as client:
        name, first, second = _shared(client)
        _accepted, done = forward(client, [name], "https://shared.example.com/")
        assert done["status"] == "completed", done
        service.wait_projections()
        for order_id in (first, second):
            (item,) = client.get(f"/orders/{order_id}").json()["data"]["domains"]
            assert item["forwarding_url"] == "https://shared.example.com/", (order_id, item)
        (row,) = domains(client, domain=name)
        assert row["forwarding_url"] == "https://shared.example.com/"


def test_a_second_order_waiting_on_the_partner_leaves_a_live_name_live(
    service: RunningService,
) -> None:
    """The name is live on a completed order: while a second order naming it waits on the
    partner, the domain needs nothing from the partner. No `domain.action_required`, and
    `GET /domains` keeps showing it active on the first order."""
    with service.partner() as client:
        workspace = new_workspace(client)
        first = placed(client, counts(workspace, a=1))
        name, dom_id = first["domains"][0]["domain"], first["domains"][0]["id"]
        named = [{"domain": name, "suite": "suite_b"}]
        waiting = placed(client, counts(workspace, a=0, b=1, domains=named,
                                        profile_picture_url="https://10.1.2.3/p.png"))
        assert waiting["status"] == "action_required", waiting
        service.wait_projections()
        row = client.get(f"/domains/{dom_id}").json()["data"]
        assert (row["status"], row["order_id"]) == ("active", first["id"]), row
        needing = client.get("/events", params={"type": "domain.action_required"}).json()["data"]
        assert [e for e in needing if e["data"]["id"] == dom_id] == []
