"""Sandbox orders through HTTP: placement, completion at once, errors, idempotency, pending
actions, cancellation, quotes."""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx
from conftest import PATIENCE, RunningService

from infra.clock import ManualClock


def new_workspace(client: httpx.Client, provider: str = "u", **credentials: str) -> str:
    creds = {"api_key": "key_good", **credentials}
    response = client.post(
        "/workspaces",
        json={"name": "Acme outbound", "provider": provider, "credentials": creds},
        headers={"Idempotency-Key": str(uuid.uuid4())},
    )
    assert response.status_code == 201, response.text
    return str(response.json()["data"]["workspace_id"])


def place(client: httpx.Client, body: dict[str, Any], key: str | None = None) -> httpx.Response:
    return client.post("/orders", json=body, headers={"Idempotency-Key": key or str(uuid.uuid4())})


def wait_order(client: httpx.Client, order_id: str, timeout: float = 30.0) -> dict[str, Any]:
    """The order once the worker moved it on from `in_progress`, and the lists (read models,
    which follow the log) caught up with that move, so later reads of any list agree."""
    deadline = time.monotonic() + timeout
    while True:
        listed = client.get("/orders", params={"per_page": 100}).json()["data"]
        row = next((o for o in listed if o["id"] == order_id), None)
        if row is not None and row["status"] != "in_progress":
            order: dict[str, Any] = client.get(f"/orders/{order_id}").json()["data"]
            return order
        assert time.monotonic() < deadline, f"order {order_id} stayed in_progress"
        # At most 20 reads a second: the organization's rate burst (600, refilled at 10 a
        # second) then outlasts the 30 s wait.
        time.sleep(0.05)


def settled(client: httpx.Client, response: httpx.Response) -> dict[str, Any]:
    """A sandbox order answered as live answers it (`in_progress`), followed to the state the
    worker leaves it in."""
    assert response.status_code == 201, response.text
    accepted: dict[str, Any] = response.json()["data"]
    assert accepted["status"] == "in_progress", accepted
    return wait_order(client, accepted["id"])


def placed(client: httpx.Client, body: dict[str, Any], key: str | None = None) -> dict[str, Any]:
    """Place a sandbox order and wait until the worker completed it (or stopped it)."""
    return settled(client, place(client, body, key))


def counts(workspace: str, a: int = 2, b: int = 0, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"destination": {"workspace_id": workspace}, **extra}
    if a:
        body["suite_a"] = {"domains": a, "inboxes_per_domain": 3}
    if b:
        body["suite_b"] = {"domains": b, "inboxes_per_domain": 2}
    return body


def error_of(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == code, error
    return error


def test_sandbox_order_answers_in_progress_then_completes_with_inboxes_and_dns(
    service_factory: Any,
) -> None:
    """Decisions 5: the sandbox answers as live does (`in_progress`), then completes at once:
    it waits for no worker step, however long a live one takes."""
    service = service_factory(fulfillment_step_seconds=30)
    with service.partner() as client:
        workspace = new_workspace(client)
        personas = [{"first_name": "Ann", "last_name": "Lee"}]
        response = place(client, counts(workspace, a=2, b=1, personas=personas))
        assert response.status_code == 201, response.text
        accepted = response.json()["data"]
        assert accepted["id"].startswith("ord_")
        assert accepted["status"] == "in_progress"
        started = time.monotonic()
        order = wait_order(client, accepted["id"])
        # Well within a second on an idle machine; the bound leaves room for a loaded one.
        assert time.monotonic() - started < 5.0, "a sandbox order waits for no worker step"
        assert order["status"] == "completed"
        assert order["destination"]["workspace_id"] == workspace
        assert order["licenses"] == {"suite_a": 6, "suite_b": 2}
        assert len(order["domains"]) == 3
        for domain in order["domains"]:
            assert domain["id"].startswith("dom_")
            assert domain["status"] == "active"
            assert domain["provider"] == domain["suite"]
            types = {r["type"] for r in domain["dns_records"]}
            assert {"MX", "TXT"} <= types
            assert any("DKIM1" in r["value"] for r in domain["dns_records"])
            assert all(i["address"].endswith("@" + domain["domain"]) for i in domain["inboxes"])
        first = order["domains"][0]["inboxes"][0]
        assert first["address"].startswith("ann.lee@")
        assert first["persona"] == {"first_name": "Ann", "last_name": "Lee"}
        assert order["price_cents"] == 6 * 450 + 2 * 600 + 3 * 1299
        assert accepted["price_cents"] == order["price_cents"]

        listed = client.get("/orders").json()
        assert [o["id"] for o in listed["data"]] == [order["id"]]
        assert listed["data"][0]["status"] == "completed"
        # Sandbox never bills.
        wallet = client.get("/wallet").json()["data"]
        assert wallet["balance_cents"] == 0 and wallet["entries"] == []


def test_same_key_same_body_is_the_same_order(service: RunningService) -> None:
    with service.partner() as client:
        body = counts(new_workspace(client))
        first = place(client, body, key="order-1")
        again = place(client, body, key="order-1")
        assert again.status_code == 201
        assert again.headers["Idempotent-Replayed"] == "true"
        assert again.json()["data"]["id"] == first.json()["data"]["id"]
        error_of(place(client, counts(body["destination"]["workspace_id"], a=1), "order-1"),
                 409, "idempotency_conflict")
        missing = client.post("/orders", json=body)
        error_of(missing, 400, "idempotency_key_required")
        assert len(client.get("/orders").json()["data"]) == 1


def test_order_validation_errors(service: RunningService) -> None:
    with service.partner() as client:
        workspace = new_workspace(client)
        both = counts(workspace, bundle_id="bun_" + "0" * 32)
        error_of(place(client, both), 400, "order_shape_conflict")
        error_of(place(client, {"destination": {"workspace_id": workspace}}), 400,
                 "order_shape_conflict")
        unknown = counts(workspace)
        unknown["destination"]["foo"] = 1
        assert error_of(place(client, unknown), 400, "invalid_request")["field"] == "destination.foo"
        error_of(place(client, counts("wrk_" + "1" * 32)), 404, "not_found")
        premium = counts(workspace, a=1, domains=[{"domain": "premiumname.com", "suite": "suite_a"}])
        error_of(place(client, premium), 400, "premium_domain_not_supported")
        foreign = counts(workspace, a=1, domains=[{"domain": "notmine.com", "suite": "suite_a"}])
        assert error_of(place(client, foreign), 409, "domain_not_imported")["field"] == (
            "domains[0].domain"
        )
        wrong_suite = counts(workspace, a=1, domains=[{"domain": "notmine.com", "suite": "suite_b"}])
        error_of(place(client, wrong_suite), 400, "domain_count_mismatch")
        with_client = counts(workspace)
        with_client["destination"]["client_id"] = 5
        error_of(place(client, with_client), 400, "invalid_request")
        login = counts(workspace)
        login["destination"].update(email="a@b.co", password="pw")
        error_of(place(client, login), 400, "invalid_request")
        assert client.get("/orders").json()["data"] == []


def test_kind_m_client_and_login_rules(service: RunningService) -> None:
    with service.partner() as client:
        workspace = new_workspace(client, "m", label="Main")
        unknown = counts(workspace)
        unknown["destination"]["client_id"] = 424242
        error_of(place(client, unknown), 404, "sequencer_client_not_found")
        error_of(place(client, counts(workspace, a=0, b=1)), 400,
                 "provider_login_credentials_required")
        assert place(client, counts(workspace, a=1)).status_code == 201


def test_private_picture_needs_action_then_resolves(service: RunningService) -> None:
    with service.partner() as client:
        body = counts(new_workspace(client), a=1, profile_picture_url="http://10.0.0.5/me.png")
        order = placed(client, body)
        assert order["status"] == "action_required"
        pending = client.get("/orders/pending", params={"order_id": order["id"]}).json()["data"]
        assert len(pending) == 1 and pending[0]["id"].startswith("act_")
        assert pending[0]["status"] == "pending"
        assert pending[0]["id"] == order["pending_action_id"]
        resolve = f"/orders/pending/{pending[0]['id']}/resolve"
        bad = client.post(resolve, json={"profile_picture_url": "https://localhost/x.png"})
        assert error_of(bad, 400, "invalid_request")["field"] == "profile_picture_url"
        good = client.post(resolve, json={"profile_picture_url": "https://cdn.example.com/a.png"})
        assert good.status_code == 200, good.text
        assert good.json()["data"]["status"] == "resolved"
        # Resumed, the order answers as live does, and the worker completes it at once.
        assert good.json()["data"]["order"]["status"] == "in_progress"
        assert wait_order(client, order["id"])["status"] == "completed"
        again = client.post(resolve, json={"profile_picture_url": "https://cdn.example.com/a.png"})
        error_of(again, 409, "order_state_conflict")
        rows = client.get("/orders/pending", params={"order_id": order["id"]}).json()["data"]
        assert rows[0]["status"] == "resolved"


def test_cancel_after_grace_releases_domains_for_a_new_order(service_factory: Any) -> None:
    clock = ManualClock()
    service = service_factory(clock=clock, cancel_grace_seconds=300)
    with service.partner() as client:
        workspace = new_workspace(client)
        order = placed(client, counts(workspace, a=1))
        name = order["domains"][0]["domain"]
        reuse = counts(workspace, a=1, domains=[{"domain": name, "suite": "suite_a"}])
        mismatch = counts(workspace, a=2, domains=[{"domain": name, "suite": "suite_a"}])
        error_of(place(client, mismatch), 400, "domain_count_mismatch")
        cancel = client.post(f"/orders/{order['id']}/cancel")
        assert cancel.status_code == 200, cancel.text
        assert cancel.json()["data"]["status"] == "cancel_scheduled"
        error_of(place(client, reuse), 409, "domain_already_in_active_order")
        error_of(client.post(f"/orders/{order['id']}/cancel"), 409, "order_state_conflict")
        clock.advance(301)
        deadline = time.monotonic() + PATIENCE
        while client.get(f"/orders/{order['id']}").json()["data"]["status"] != "cancelled":
            assert time.monotonic() < deadline, "cancellation was not finalized"
            time.sleep(0.02)
        service.wait_projections()
        again = placed(client, reuse)
        assert again["domains"][0]["source"] == "named"
        assert again["price_cents"] == 450 * 3


def test_quote_is_free_of_effects_and_open_to_limited_keys(service: RunningService) -> None:
    org = service.new_org()
    with service.client(service.new_key(org, "test", "full")) as full:
        workspace = new_workspace(full)
    with service.client(service.new_key(org, "test", "limited")) as limited:
        quote = limited.post("/quotes", json=counts(workspace, a=2))
        assert quote.status_code == 200, quote.text
        assert quote.json()["data"]["total_cents"] == 6 * 450 + 2 * 1299
        error_of(place(limited, counts(workspace)), 403, "forbidden")
        assert limited.get("/orders").json()["data"] == []


def test_order_webhook_events(service: RunningService) -> None:
    with service.partner() as client:
        order = placed(client, counts(new_workspace(client), a=2))
        service.wait_projections()
        events = client.get("/events", params={"per_page": 100}).json()["data"]
        # In log order (the list is newest first), as a live order sends them: the order is
        # completed once every domain is connected.
        assert [e["type"] for e in reversed(events)] == [
            "order.in_progress", "domain.connected", "domain.connected", "order.completed"
        ]
        by_type: dict[str, list[dict[str, Any]]] = {}
        for event in events:
            by_type.setdefault(event["type"], []).append(event)
        # Spec changelog 2026-07-10: `destination` in order responses and webhooks.
        assert by_type["order.in_progress"][0]["data"] == {
            "id": order["id"], "status": "in_progress", "destination": order["destination"]
        }
        assert by_type["order.completed"][0]["data"] == order
        connected = by_type["domain.connected"]
        assert sorted(e["data"]["domain"] for e in connected) == sorted(
            d["domain"] for d in order["domains"]
        )
        assert connected[0]["data"]["order_id"] == order["id"]


def test_every_spelling_of_a_private_picture_host_needs_action(service: RunningService) -> None:
    """Decisions 5: a picture whose host is not public sends the order to `action_required`,
    however the address is written (the suites' fetchers resolve `127.1` as the C library does)."""
    with service.partner() as client:
        workspace = new_workspace(client)
        for host in ("127.1", "127.0.1", "10.1", "0177.0.0.1", "0x7f.0.0.1", "2130706433",
                     "[::ffff:127.0.0.1]", "pictures.invalid",
                     # Not a name a resolver could look up, or no port a server listens on.
                     "a..b.com", "exa_mple.com", "a" * 64 + ".com", "-pics.com",
                     "example.com:99999"):
            body = counts(workspace, a=1, profile_picture_url=f"https://{host}/p.png")
            assert placed(client, body)["status"] == "action_required", host
        for url in ("https://93.184.216.34/p.png", "https://cdn.example.co.uk:8443/p.png",
                    "https://münchen.de/p.png"):
            public = counts(workspace, a=1, profile_picture_url=url)
            assert placed(client, public)["status"] == "completed", url


def test_dkim_records_hold_real_rsa_keys(service: RunningService) -> None:
    """Decisions 5: real DKIM keys; each record's `p=` is an RSA-2048 public key (DER) of the
    deployment's set (a key may repeat across domains), on orders of either suite."""
    import base64

    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey
    from cryptography.hazmat.primitives.serialization import load_der_public_key

    with service.partner() as client:
        order = placed(client, counts(new_workspace(client), a=2, b=1))
    for domain in order["domains"]:
        (dkim,) = [r for r in domain["dns_records"] if r["value"].startswith("v=DKIM1")]
        assert dkim["name"].endswith("._domainkey." + domain["domain"])
        assert "; k=rsa; p=" in dkim["value"]
        key = load_der_public_key(base64.b64decode(dkim["value"].split("p=", 1)[1]))
        assert isinstance(key, RSAPublicKey) and key.key_size == 2048
        assert key.public_numbers().e == 65537
    published = {r["value"].split("p=", 1)[1] for d in order["domains"]
                 for r in d["dns_records"] if r["value"].startswith("v=DKIM1")}
    assert published <= set(service.container.dkim_keys.storage.load())


def test_a_sandbox_order_answered_by_a_process_that_died_is_still_completed(
    service_factory: Any,
) -> None:
    """The accepted order is saved before the answer, and its completion is the worker's job
    from the event log: a gateway that answers and dies (here: one running no worker at all)
    leaves an order that the next worker completes."""
    gateway = service_factory(roles=["gateway", "projections"])
    org = gateway.new_org()
    secret = gateway.new_key(org)
    with gateway.client(secret) as client:
        accepted = place(client, counts(new_workspace(client), a=1))
        assert accepted.status_code == 201, accepted.text
        order_id = accepted.json()["data"]["id"]
        assert accepted.json()["data"]["status"] == "in_progress"
        time.sleep(0.3)  # no worker: nothing moves it meanwhile
        assert client.get(f"/orders/{order_id}").json()["data"]["status"] == "in_progress"
    gateway.server.should_exit = True
    gateway.thread.join(timeout=10)
    gateway.container.close()

    recovered = service_factory()
    with recovered.client(secret) as client:
        order = wait_order(client, order_id)
    assert order["status"] == "completed"
    assert all(d["status"] == "active" for d in order["domains"])


def test_sandbox_and_live_orders_answer_and_notify_alike(service_factory: Any) -> None:
    """Decisions 5: the same first answer and the same webhooks in the same order; only the
    time to completion and the bill differ."""
    from test_wallet_purchase import credit

    service = service_factory(fulfillment_step_seconds=0.05)
    org = service.new_org()
    credit(service, org, 100_000)
    seen: dict[str, tuple[str, list[str]]] = {}
    for environment in ("test", "live"):
        with service.client(service.new_key(org, environment)) as client:
            response = place(client, counts(new_workspace(client), a=2))
            first = response.json()["data"]["status"]
            assert settled(client, response)["status"] == "completed"
            service.wait_projections()
            events = client.get("/events", params={"per_page": 100}).json()["data"]
            seen[environment] = (first, [e["type"] for e in reversed(events)])
    assert seen["test"] == seen["live"] == (
        "in_progress",
        ["order.in_progress", "domain.connected", "domain.connected", "order.completed"],
    )
