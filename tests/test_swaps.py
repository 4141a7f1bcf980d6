"""Swaps through HTTP: standard, premium (14 days on the injected clock) and user_names, in the
sandbox and live; validation, tenancy, failure, partner input, and the swap.* webhooks."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from conftest import RunningService, ServiceFactory
from test_orders_live import wait_status
from test_orders_sandbox import counts, error_of, new_workspace, place, placed
from test_wallet_purchase import buy, credit
from webhook_receiver import wait_until

from domain.swaps import Swap
from infra.clock import ManualClock
from infra.ids import parse_id
from workers.swaps import SwapWorker

DAY = 86_400
PERSONAS = [{"first_name": "Ann", "last_name": "Lee"}, {"first_name": "Bo", "last_name": "Kim"}]


def swap(client: httpx.Client, body: dict[str, Any], key: str | None = None) -> httpx.Response:
    return client.post("/swaps", json=body, headers={"Idempotency-Key": key or str(uuid.uuid4())})


def of(order: dict[str, Any], domain: str, kind: str = "standard", **extra: Any) -> dict[str, Any]:
    """A `POST /swaps` body."""
    return {"order_id": order["id"], "domain": domain, "type": kind, **extra}


def rename(client: httpx.Client, domain: str, personas: list[Any]) -> httpx.Response:
    return client.post("/swaps/user_names", json={"domain": domain, "personas": personas})


def order_domains(client: httpx.Client, order_id: str) -> set[str]:
    return {d["domain"] for d in client.get(f"/orders/{order_id}").json()["data"]["domains"]}


def completed_order(client: httpx.Client, a: int = 1) -> dict[str, Any]:
    order = placed(client, counts(new_workspace(client), a=a, personas=PERSONAS))
    assert order["status"] == "completed"
    return order


def swap_events(client: httpx.Client, swap_id: str) -> list[dict[str, Any]]:
    """This swap's webhook events, oldest first."""
    events = client.get("/events", params={"per_page": 100}).json()["data"]
    return [
        e for e in reversed(events) if e["type"].startswith("swap.") and e["data"]["id"] == swap_id
    ]


def wait_swap(
    client: httpx.Client, swap_id: str, check: Any, timeout: float = 30.0
) -> dict[str, Any]:
    def fetch() -> dict[str, Any] | None:
        found: dict[str, Any] = client.get(f"/swaps/{swap_id}").json()["data"]
        return found if check(found) else None

    result: dict[str, Any] = wait_until(fetch, timeout=timeout)
    return result


def settled(client: httpx.Client, response: httpx.Response) -> dict[str, Any]:
    """A sandbox swap, accepted as `created`, followed to the state the worker leaves it in."""
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()["data"]
    assert created["status"] == "created", created
    return wait_swap(client, created["id"], lambda s: s["status"] not in ("created", "in_progress"))


def swap_event_names(service: RunningService, swap_id: str) -> list[str]:
    events = service.container.store.recorder.select_events(parse_id("swp", swap_id))
    return [e.topic.rsplit(".", 1)[-1] for e in events]


def test_standard_swap_in_sandbox_replaces_the_domain(service: RunningService) -> None:
    with service.partner() as client:
        order = completed_order(client)
        old = order["domains"][0]
        done = settled(client, swap(client, of(order, old["domain"])))
        assert done["id"].startswith("swp_") and done["status"] == "completed"
        assert done["type"] == "standard" and done["old_domain_status"] == "detached"
        assert done["old_domain_detached_at"] == done["completed_at"] is not None
        assert done["new_domain"] != old["domain"] and done["new_domain_source"] == "generated"
        assert done["charged_cents"] == 0  # the sandbox never bills
        # The same personas and inbox count, on the new domain.
        assert [i["persona"] for i in done["inboxes"]] == [i["persona"] for i in old["inboxes"]]
        assert all(i["address"].endswith("@" + done["new_domain"]) for i in done["inboxes"])

        after = client.get(f"/orders/{order['id']}").json()["data"]
        (new,) = after["domains"]
        assert new["domain"] == done["new_domain"] and new["status"] == "active"
        assert new["id"] == done["new_domain_id"] and len(new["inboxes"]) == 3
        assert after["warm_domains"] == []
        inventory = client.get("/domains", params={"domain": old["domain"]}).json()["data"]
        assert [(d["status"], d["category"]) for d in inventory] == [("available", "inventory")]

        assert client.get(f"/swaps/{done['id']}").json()["data"] == done
        listed = client.get("/swaps", params={"order_id": order["id"], "status": "completed"})
        assert [s["id"] for s in listed.json()["data"]] == [done["id"]]
        assert client.get("/swaps", params={"status": "failed"}).json()["data"] == []
        service.wait_projections()
        events = swap_events(client, done["id"])
        assert [e["type"] for e in events] == ["swap.created", "swap.in_progress", "swap.completed"]
        assert events[-1]["data"] == done
        # The new domain's `domain.connected` carries its connected row's link fields.
        connected = client.get("/events", params={"type": "domain.connected"}).json()["data"]
        (event,) = [e for e in connected if e["data"]["domain"] == done["new_domain"]]
        row = client.get(f"/domains/{done['new_domain_id']}").json()["data"]
        for field in ("category", "source", "order_id", "customer_id", "usable_for", "suite"):
            assert event["data"][field] == row[field], (field, event["data"], row)
        assert event["data"]["swap_id"] == done["id"]
        # The old domain is no longer on the order: a second swap of it is refused.
        again = swap(client, of(order, old["domain"]))
        assert error_of(again, 400, "invalid_request")["field"] == "domain"


def test_premium_swap_keeps_the_old_domain_warm_for_14_days(
    service_factory: ServiceFactory,
) -> None:
    clock = ManualClock()
    service = service_factory(clock=clock)
    with service.partner() as client:
        order = completed_order(client)
        old = order["domains"][0]["domain"]
        done = settled(client, swap(client, of(order, old, "premium", new_domain="fresh-name.com")))
        assert done["status"] == "completed" and done["new_domain"] == "fresh-name.com"
        assert done["new_domain_source"] == "purchase" and done["old_domain_status"] == "warm"
        view = client.get(f"/orders/{order['id']}").json()["data"]
        assert [d["domain"] for d in view["domains"]] == ["fresh-name.com"]
        assert [d["domain"] for d in view["warm_domains"]] == [old]
        assert view["warm_domains"][0]["warm_until"] == done["warm_until"]
        assert view["warm_domains"][0]["inboxes"]  # still sending
        # Spec 1: personas of the domain kept warm can be renamed while it is.
        renamed = settled(client, rename(client, old, [{"first_name": "Wa", "last_name": "Rm"}]))
        assert renamed["status"] == "completed" and renamed["domain"] == old
        view = client.get(f"/orders/{order['id']}").json()["data"]
        (kept,) = view["warm_domains"]
        assert kept["warm_until"] == done["warm_until"]
        assert {i["address"].split("@")[0].rstrip("0123456789") for i in kept["inboxes"]} == {
            "wa.rm"
        }
        assert [d["domain"] for d in view["domains"]] == ["fresh-name.com"]

        clock.advance(14 * DAY - 60)
        # A worker pass of our own, so "nothing due yet" is checked without sleeping.
        assert SwapWorker(service.container).run_once() == 0
        assert client.get(f"/swaps/{done['id']}").json()["data"]["old_domain_status"] == "warm"
        clock.advance(61)
        detached = wait_swap(client, done["id"], lambda s: s["old_domain_status"] == "detached")
        assert detached["old_domain_detached_at"] is not None
        service.wait_projections()
        view = client.get(f"/orders/{order['id']}").json()["data"]
        assert view["warm_domains"] == []
        assert [d["domain"] for d in view["domains"]] == ["fresh-name.com"]
        rows = client.get("/domains", params={"domain": old}).json()["data"]
        assert [(d["status"], d["category"]) for d in rows] == [("available", "inventory")]


def test_user_names_renames_the_personas_of_a_warm_domain(service: RunningService) -> None:
    with service.partner() as client:
        order = completed_order(client)
        domain = order["domains"][0]
        personas = [{"first_name": "Cy", "last_name": "Dunn"}]
        done = settled(client, rename(client, domain["domain"], personas))
        assert done["type"] == "user_names" and done["status"] == "completed"
        assert done["domain"] == domain["domain"] and done["new_domain"] is None
        view = client.get(f"/orders/{order['id']}").json()["data"]
        (renamed,) = view["domains"]
        assert renamed["domain"] == domain["domain"] and renamed["id"] == domain["id"]
        assert [i["address"] for i in renamed["inboxes"]] == [
            f"cy.dunn@{domain['domain']}",
            f"cy.dunn2@{domain['domain']}",
            f"cy.dunn3@{domain['domain']}",
        ]
        service.wait_projections()
        types = [e["type"] for e in swap_events(client, done["id"])]
        assert types == ["swap.created", "swap.in_progress", "swap.completed"]


def test_swap_shapes_are_documented_in_openapi(service: RunningService) -> None:
    schema = httpx.get(f"{service.api}/schema/openapi.json", timeout=10.0).json()
    assert {"/partner/v1/swaps", "/partner/v1/swaps/user_names"} <= set(schema["paths"])
    shapes = schema["components"]["schemas"]
    assert "swap.action_required" in shapes["SwapResponse"]["properties"]["data"]["description"]
    shape = shapes["SwapOut"]
    assert "warm_until" in shape["properties"]
    assert shape["properties"]["old_domain_status"]["description"]
    create = schema["paths"]["/partner/v1/swaps"]["post"]
    body = create["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert set(shapes[body.rsplit("/", 1)[-1]]["properties"]) == {
        "order_id", "domain", "type", "new_domain"
    }


def test_swap_validation_errors_and_tenancy(service: RunningService) -> None:
    org = service.new_org()
    with service.client(service.new_key(org)) as client:
        order = completed_order(client)
        name = order["domains"][0]["domain"]
        good = of(order, name)
        for extra, field in (({"extra": 1}, "extra"), ({"type": "gold"}, "type")):
            error = error_of(swap(client, {**good, **extra}), 400, "invalid_request")
            assert error["field"] == field
        missing = {"order_id": order["id"], "type": "standard"}
        assert error_of(swap(client, missing), 400, "invalid_request")["field"] == "domain"
        stranger = {**good, "domain": "stranger.com"}
        assert error_of(swap(client, stranger), 400, "invalid_request")["field"] == "domain"
        premium = {**good, "new_domain": "premiumname.com"}
        assert error_of(swap(client, premium), 400, "premium_domain_not_supported")["field"] == (
            "new_domain"
        )
        taken = swap(client, {**good, "new_domain": "is-taken.com"})
        assert error_of(taken, 409, "domains_not_submittable")["field"] == "new_domain"
        assert error_of(swap(client, {**good, "new_domain": "bad name"}), 400, "invalid_request")[
            "field"
        ] == "new_domain"
        unknown = {**good, "order_id": "ord_" + "0" * 32}
        assert error_of(swap(client, unknown), 404, "not_found")["field"] == "order_id"
        none = rename(client, name, [])
        assert error_of(none, 400, "invalid_request")["field"] == "personas"
        half = rename(client, name, [{"first_name": "X"}])
        assert error_of(half, 400, "invalid_request")["field"] == "personas[0].last_name"
        blank = rename(client, name, [{"first_name": " ", "last_name": "X"}])
        assert error_of(blank, 400, "invalid_request")["field"] == "personas[0].first_name"
    with service.client(service.new_key(org, "test", "limited")) as limited:
        error_of(swap(limited, good), 403, "forbidden")
    with service.partner() as other:
        error_of(swap(other, good), 404, "not_found")
        foreign = rename(other, name, PERSONAS)
        assert error_of(foreign, 404, "not_found")["field"] == "domain"
        assert other.get("/swaps").json()["data"] == []
    with service.client(service.new_key(org)) as client:
        assert client.get("/swaps").json()["data"] == []
        assert client.get(f"/orders/{order['id']}").json()["data"]["domains"][0]["domain"] == name
        # The spec requires Idempotency-Key on orders, workspaces and purchases only.
        assert client.post("/swaps", json=good).status_code == 201


def test_failed_swap_and_swap_waiting_on_nameservers(service_factory: ServiceFactory) -> None:
    clock = ManualClock()
    service = service_factory(clock=clock)
    with service.partner() as client:
        order = completed_order(client, a=2)
        first, second = (d["domain"] for d in order["domains"])
        failed = settled(client, swap(client, of(order, first, new_domain="mailfail-new.com")))
        assert failed["status"] == "failed" and "mailfail-new.com" in failed["reason"]
        assert order_domains(client, order["id"]) == {first, second}
        imported = client.post("/domains/import", json={"domains": ["nsslow-new.com"]})
        assert imported.status_code == 201, imported.text
        waiting = settled(client, swap(client, of(order, second, new_domain="nsslow-new.com")))
        assert waiting["status"] == "action_required" and "nameservers" in waiting["reason"]
        clock.advance(61)
        done = wait_swap(client, waiting["id"], lambda s: s["status"] == "completed")
        assert done["new_domain_source"] == "inventory"
        assert order_domains(client, order["id"]) == {first, "nsslow-new.com"}
        service.wait_projections()
        assert [e["type"] for e in swap_events(client, failed["id"])] == [
            "swap.created",
            "swap.in_progress",
            "swap.failed",
        ]
        assert [e["type"] for e in swap_events(client, waiting["id"])] == [
            "swap.created",
            "swap.in_progress",
            "swap.action_required",
            "swap.in_progress",
            "swap.completed",
        ]


def test_live_swaps_run_step_by_step_and_charge_the_wallet(service_factory: ServiceFactory) -> None:
    service = service_factory(fulfillment_step_seconds=0.05)
    org = service.new_org()
    credit(service, org, 50_000)
    with service.client(service.new_key(org, "live")) as live:
        response = place(live, counts(new_workspace(live), a=2, personas=PERSONAS))
        order = wait_status(live, response.json()["data"]["id"], "completed", timeout=30)
        first, second = (d["domain"] for d in order["domains"])
        balance = live.get("/wallet").json()["data"]["balance_cents"]

        standard = swap(live, of(order, first)).json()["data"]
        assert standard["status"] == "created" and standard["charged_cents"] == 1299
        assert live.get("/wallet").json()["data"]["balance_cents"] == balance - 1299
        assert error_of(swap(live, of(order, first)), 409, "conflict")["field"] == "domain"
        doomed = swap(live, of(order, second, "premium", new_domain="mailfail-live.com"))
        doomed = doomed.json()["data"]
        done = wait_swap(live, standard["id"], lambda s: s["status"] == "completed")
        assert done["old_domain_status"] == "detached" and len(done["inboxes"]) == 3
        failed = wait_swap(live, doomed["id"], lambda s: s["status"] == "failed")
        assert failed["refunded_cents"] == failed["charged_cents"] == 1299
        assert live.get("/wallet").json()["data"]["balance_cents"] == balance - 1299

        premium = swap(live, of(order, second, "premium", new_domain="warm-live.com"))
        premium = premium.json()["data"]
        warm = wait_swap(live, premium["id"], lambda s: s["status"] == "completed")
        assert warm["old_domain_status"] == "warm"
        service.wait_projections()
        renaming = rename(live, done["new_domain"], PERSONAS[:1])
        assert renaming.status_code == 201 and renaming.json()["data"]["status"] == "created"
        renaming_id = renaming.json()["data"]["id"]
        renamed = wait_swap(live, renaming_id, lambda s: s["status"] == "completed")
        assert renamed["inboxes"][0]["address"] == f"ann.lee@{done['new_domain']}"

        view = live.get(f"/orders/{order['id']}").json()["data"]
        assert {d["domain"] for d in view["domains"]} == {done["new_domain"], "warm-live.com"}
        assert [d["domain"] for d in view["warm_domains"]] == [second]
    assert swap_event_names(service, standard["id"]) == [
        "Created", "Started", "StepCompleted", "StepCompleted", "StepCompleted", "StepCompleted",
        "Completed",
    ]
    assert swap_event_names(service, renamed["id"]) == [
        "Created", "Started", "StepCompleted", "StepCompleted", "Completed"
    ]
    stored = service.container.store.find(parse_id("swp", standard["id"]), Swap)
    assert isinstance(stored, Swap)
    assert stored.steps_done == ["register", "dns", "mailboxes", "sequencer"]



def test_a_purchase_is_not_swappable(service_factory: ServiceFactory) -> None:
    """A purchase buys domains without mailboxes (spec 4.2): a swap, which moves a domain's
    mailboxes, has nothing to move there, and nothing is charged or changed."""
    service = service_factory(fulfillment_step_seconds=0.05)
    org = service.new_org()
    credit(service, org, 10_000)
    with service.client(service.new_key(org, "live")) as client:
        purchase = buy(client, "swp-bought.com").json()["data"]
        wait_status(client, purchase["id"], "completed")
        balance = client.get("/wallet").json()["data"]["balance_cents"]
        refused = swap(client, of(purchase, "swp-bought.com"))
        assert error_of(refused, 400, "invalid_request")["field"] == "order_id"
        assert client.get("/wallet").json()["data"]["balance_cents"] == balance
        assert client.get("/swaps").json()["data"] == []
        assert order_domains(client, purchase["id"]) == {"swp-bought.com"}


def test_a_chosen_name_never_takes_on_a_simulated_outcome(service: RunningService) -> None:
    """The name a swap chooses is built from the old one's label: an imported `takenpremium...`
    must not give a premium name, which registries refuse and price at 50 times."""
    with service.partner() as client:
        name = "takenpremium-one.com"
        assert client.post("/domains/import", json={"domains": [name]}).status_code == 201
        body = counts(new_workspace(client), a=1, domains=[{"domain": name, "suite": "suite_a"}])
        order = placed(client, body)
        assert order["status"] == "completed", order
        done = wait_swap(client, swap(client, of(order, name)).json()["data"]["id"],
                         lambda s: s["status"] == "completed")
        assert not done["new_domain"].startswith("premium"), done["new_domain"]
        row = client.post("/domains/availability", json={"domains": [done["new_domain"]]})
        assert row.json()["data"]["domains"][0]["price_cents"] == 1299
