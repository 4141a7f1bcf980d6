"""Forwarding reaches domains that live inside an order, not only imported ones (decisions.md 3)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import NEEDS_NATS, PATIENCE, RunningService, ServiceFactory
from test_domains_inventory import domains, forward, order
from test_orders_live import wait_status
from test_orders_sandbox import counts, error_of, new_workspace
from test_wallet_purchase import buy, credit
from webhook_receiver import wait_until


def test_forwarding_applies_to_domains_held_by_an_order(service: RunningService) -> None:
    with service.partner() as client:
        placed = order(client, forwarding_url="https://before.example/")
        client.post("/domains/import", json={"domains": ["fwo-imported.com"]})
        names = [d["domain"] for d in placed["domains"]]
        url = "https://after.example/"
        _, job = forward(client, [*names, "fwo-imported.com"], url)
        assert job["status"] == "completed" and job["pending"] == []
        assert sorted(job["completed"]) == sorted([*names, "fwo-imported.com"])

        for item in placed["domains"]:
            row = client.get(f"/domains/{item['id']}").json()["data"]
            assert row["forwarding_url"] == url and row["order_id"] == placed["id"]
        connected = domains(client, category="connected")
        assert {r["forwarding_url"] for r in connected} == {url}
        assert domains(client, domain="fwo-imported.com")[0]["forwarding_url"] == url
        on_order = client.get(f"/orders/{placed['id']}").json()["data"]["domains"]
        assert {d["forwarding_url"] for d in on_order} == {url}

        service.wait_projections()
        updated = client.get("/events", params={"type": "domain.forwarding_updated"}).json()
        assert sorted(e["data"]["domain"] for e in updated["data"]) == sorted(
            [*names, "fwo-imported.com"]
        )
        # Each carries its domain's own status as the job finished: live on the order.
        statuses = {e["data"]["domain"]: e["data"]["status"] for e in updated["data"]}
        assert statuses == {**dict.fromkeys(names, "active"), "fwo-imported.com": "available"}

        # Already forwarding there: completed at once, nothing changes, no second event.
        again = client.post(
            "/domains/forwarding", json={"domains": names, "forwarding_url": url}
        ).json()["data"]
        assert sorted(again["completed"]) == sorted(names) and again["pending"] == []
        assert again["status"] == "completed"
        service.wait_projections()
        repeat = client.get("/events", params={"type": "domain.forwarding_updated"}).json()
        assert len(repeat["data"]) == len(names) + 1


def test_live_forwarding_applies_to_a_purchased_domain(service_factory: ServiceFactory) -> None:
    """A purchased domain is inventory held by its purchase order (no order on its row)."""
    service = service_factory(fulfillment_step_seconds=0.05)
    org = service.new_org()
    credit(service, org, 5000)
    url = "https://bought.example/"
    with service.client(service.new_key(org, "live")) as client:
        bought = buy(client, "fwo-bought.com")
        assert bought.status_code == 201, bought.text
        purchase = bought.json()["data"]
        [row] = domains(client, domain="fwo-bought.com")
        job = client.post(
            "/domains/forwarding", json={"domains": ["fwo-bought.com"], "forwarding_url": url}
        ).json()["data"]
        assert job["pending"] == ["fwo-bought.com"]

        def finished() -> bool:
            found = client.get(f"/domains/forwarding/jobs/{job['id']}").json()["data"]
            return bool(found["status"] == "completed")

        wait_until(finished, timeout=PATIENCE)
        # Still there once the purchase completes (the order's own item carries the URL).
        done = wait_status(client, purchase["id"], "completed", timeout=PATIENCE)
        service.wait_projections()
        shown = client.get(f"/domains/{row['id']}").json()["data"]
        assert shown["forwarding_url"] == url and shown["category"] == "inventory"
        # The purchase shows its bought domain as the inventory does (spec 2.4 `available`).
        assert [d["status"] for d in done["domains"]] == [shown["status"]] == ["available"]
        updated = client.get("/events", params={"type": "domain.forwarding_updated"}).json()
        assert [e["data"]["domain"] for e in updated["data"]] == ["fwo-bought.com"]


def test_a_domain_swapped_in_keeps_its_own_forwarding(service: RunningService) -> None:
    """The order's item and the domain row agree (spec 2.4 `forwarding_url` on connected rows)."""
    from test_swaps import completed_order, of, settled, swap

    with service.partner() as client:
        placed = completed_order(client)
        assert client.post("/domains/import", json={"domains": ["fwo-swapin.com"]}).status_code == 201
        url = "https://own.example/"
        forward(client, ["fwo-swapin.com"], url)
        service.wait_projections()
        done = swap(client, of(placed, placed["domains"][0]["domain"], new_domain="fwo-swapin.com"))
        assert settled(client, done)["status"] == "completed"
        (item,) = client.get(f"/orders/{placed['id']}").json()["data"]["domains"]
        (row,) = domains(client, domain="fwo-swapin.com")
        assert item["domain"] == "fwo-swapin.com"
        assert item["forwarding_url"] == row["forwarding_url"] == url


def test_an_order_naming_a_forwarding_domain_keeps_its_forwarding(service: RunningService) -> None:
    """Without a `forwarding_url` of its own, an order leaves a named domain's forwarding as it
    was, and the order, its events and `GET /domains` show the same URL; with one, the
    order's replaces it in every view."""
    with service.partner() as client:
        names = ["fwo-kept.com", "fwo-replaced.com"]
        assert client.post("/domains/import", json={"domains": names}).status_code == 201
        forward(client, names, "https://own.example/")
        service.wait_projections()
        for name, extra, expected in [
            (names[0], {}, "https://own.example/"),
            (names[1], {"forwarding_url": "https://order.example/"}, "https://order.example/"),
        ]:
            placed = order(
                client,
                suite_b=None,
                suite_a={"domains": 1, "inboxes_per_domain": 1},
                domains=[{"domain": name, "suite": "suite_a"}],
                **extra,
            )
            (item,) = client.get(f"/orders/{placed['id']}").json()["data"]["domains"]
            (row,) = domains(client, domain=name)
            assert item["forwarding_url"] == row["forwarding_url"] == expected, name
            service.wait_projections()
            connected = client.get("/events", params={"type": "domain.connected"}).json()["data"]
            (event,) = [e for e in connected if e["data"]["domain"] == name]
            assert event["data"]["forwarding_url"] == expected


def test_a_swap_passes_on_the_orders_forwarding_not_the_old_domains_own(
    service: RunningService,
) -> None:
    """The old domain forwarded on its own before the order (which sets none): the domain
    swapped in keeps its own URL, in the order and in `GET /domains`."""
    from test_swaps import of, settled, swap

    with service.partner() as client:
        names = ["fwo-old-own.com", "fwo-new-own.com"]
        assert client.post("/domains/import", json={"domains": names}).status_code == 201
        forward(client, names[:1], "https://old-own.example/")
        forward(client, names[1:], "https://new-own.example/")
        service.wait_projections()
        placed = order(
            client,
            suite_b=None,
            suite_a={"domains": 1, "inboxes_per_domain": 1},
            domains=[{"domain": names[0], "suite": "suite_a"}],
        )
        done = swap(client, of(placed, names[0], new_domain=names[1]))
        assert settled(client, done)["status"] == "completed"
        (item,) = client.get(f"/orders/{placed['id']}").json()["data"]["domains"]
        (row,) = domains(client, domain=names[1])
        assert item["domain"] == names[1]
        assert item["forwarding_url"] == row["forwarding_url"] == "https://new-own.example/"


def test_a_later_request_waits_for_an_earlier_job_on_the_same_domain(
    service_factory: ServiceFactory,
) -> None:
    """A domain an open job will still change is not "already correct": the later job lists it
    as pending, and the worker, finishing jobs in order, leaves the later URL."""
    from runtime.serve import resolve_roles
    from workers.domain_jobs import DomainWorker

    roles = [r for r in resolve_roles(None) if r not in ("domains", *NEEDS_NATS)]
    service = service_factory(roles=roles)  # no domains worker: jobs stay open until we run it
    a, b, name = "https://a.example/", "https://b.example/", "fwo-order.com"

    def submit(client: Any, url: str) -> dict[str, Any]:
        """As accepted: the shared `forward` waits for a worker this service does not run."""
        sent = {"domains": [name], "forwarding_url": url}
        data: dict[str, Any] = client.post("/domains/forwarding", json=sent).json()["data"]
        return data

    with service.partner() as client:
        assert client.post("/domains/import", json={"domains": [name]}).status_code == 201
        submit(client, a)
        DomainWorker(service.container).run_once()
        service.wait_projections()
        assert domains(client, domain=name)[0]["forwarding_url"] == a
        to_b, back_to_a = submit(client, b), submit(client, a)
        # The row still says a, but the open job will change it: a is not already in place.
        assert (back_to_a["completed"], back_to_a["pending"]) == ([], [name])
        DomainWorker(service.container).run_once()
        service.wait_projections()
        assert domains(client, domain=name)[0]["forwarding_url"] == a
        for job in (to_b, back_to_a):
            shown = client.get(f"/domains/forwarding/jobs/{job['id']}").json()["data"]
            assert shown["status"] == "completed"


def _refused_forwarding(client: Any, placed: dict[str, Any]) -> None:
    """The order completed without its unresolvable target, and each domain said so."""
    assert placed["status"] == "completed"
    assert placed["forwarding_url"] == "https://dead.invalid/"
    assert {d["forwarding_url"] for d in placed["domains"]} == {None}
    for item in placed["domains"]:
        assert client.get(f"/domains/{item['id']}").json()["data"]["forwarding_url"] is None
    failed = client.get("/events", params={"type": "domain.forwarding_failed"}).json()["data"]
    assert sorted(e["data"]["id"] for e in failed) == sorted(d["id"] for d in placed["domains"])
    for event in failed:
        assert event["data"]["forwarding_url"] == "https://dead.invalid/"
        assert event["data"]["order_id"] == placed["id"] and event["data"]["job_id"] is None
        assert (event["data"]["forwarding_status"], event["data"]["status"]) == ("failed", "active")
        assert event["data"]["reason"] == "forwarding_target_unresolvable"
    assert client.get("/events", params={"type": "domain.forwarding_updated"}).json()["data"] == []


def test_an_order_forwarding_to_a_name_that_does_not_resolve(service: RunningService) -> None:
    """Decisions 5: a target ending in `.invalid` gives `domain.forwarding_failed`, on an order's
    domains as through `POST /domains/forwarding`; the mailboxes do not depend on it."""
    with service.partner() as client:
        placed = order(client, forwarding_url="https://dead.invalid/")
        service.wait_projections()
        _refused_forwarding(client, placed)


def test_a_live_order_forwarding_to_a_name_that_does_not_resolve(
    service_factory: ServiceFactory,
) -> None:
    service = service_factory(fulfillment_step_seconds=0.05)
    org = service.new_org()
    credit(service, org, 50_000)
    with service.client(service.new_key(org, "live")) as client:
        placed = wait_status(client, order(client, forwarding_url="https://dead.invalid/")["id"],
                             "completed")
        service.wait_projections()
        _refused_forwarding(client, placed)


@pytest.mark.parametrize("allow_http", [False, True])
def test_a_forwarding_url_no_one_could_parse_is_refused_whatever_the_setting(
    service_factory: ServiceFactory, allow_http: bool
) -> None:
    """An unclosed IPv6 bracket, a bad port or a blank host label are 400 with `field` on
    orders, quotes and forwarding jobs, also where plain-http and loopback targets are allowed
    (`make run`): accepted, they stopped the order's DNS step and the forwarding job for good."""
    service = service_factory(allow_http_webhooks=allow_http)
    with service.partner() as client:
        workspace = new_workspace(client)
        inventory = order(client)["domains"][0]["domain"]
        for url in ("https://[bad/", "https://example.com:99999/", "https://a..example.com/"):
            body = {**counts(workspace, a=1), "forwarding_url": url}
            for path in ("/orders", "/quotes"):
                answer = client.post(path, json=body, headers={"Idempotency-Key": url + path})
                assert error_of(answer, 400, "invalid_request")["field"] == "forwarding_url"
            job = client.post(
                "/domains/forwarding", json={"domains": [inventory], "forwarding_url": url}
            )
            assert error_of(job, 400, "invalid_request")["field"] == "forwarding_url"
        assert len(client.get("/orders").json()["data"]) == 1
