"""Concurrency audit: racing REST requests never answer 500 and never double-sell a name.

Found by firing 20 requests at once at a running service (SQLite and PostgreSQL):
- PUT /webhook_endpoint and POST /webhook_endpoint/rotate_secret both save the organization;
  the loser of the version race was a 500 instead of deciding again on fresh state.
- two organizations buying one name at once both passed the read-model ownership check, so
  both were charged and both owned it (the placement lock was per organization).
- ten imports of one name each recorded a domain (the inventory check reads a read model).
- twenty sandbox orders naming one domain retried their version conflicts in lockstep and the
  last one ran out of attempts (a 500).
"""

from __future__ import annotations

import threading
import uuid
from typing import Any

import httpx
from conftest import RunningService
from test_orders_sandbox import counts, new_workspace
from test_wallet_purchase import credit


def fire(
    service: RunningService, calls: list[tuple[str, str, str, dict[str, Any] | None]]
) -> list[httpx.Response]:
    """Send every (secret, method, path, body) at once, each from its own thread and
    connection, each with its own Idempotency-Key."""
    barrier = threading.Barrier(len(calls))
    responses: list[httpx.Response | None] = [None] * len(calls)

    def send(index: int) -> None:
        secret, method, path, body = calls[index]
        with service.client(secret) as client:
            barrier.wait(timeout=30)
            responses[index] = client.request(
                method, path, json=body, headers={"Idempotency-Key": str(uuid.uuid4())}
            )

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=90)
    assert all(r is not None for r in responses)
    return [r for r in responses if r is not None]


def test_webhook_endpoint_put_and_rotate_race_without_500(service: RunningService) -> None:
    secret = service.new_key(service.new_org(), "live")
    with service.client(secret) as client:
        first = client.put("/webhook_endpoint", json={"url": "https://8.8.8.8/first"})
        assert first.status_code == 200, first.text
    calls: list[tuple[str, str, str, dict[str, Any] | None]] = []
    for i in range(6):
        calls.append((secret, "PUT", "/webhook_endpoint", {"url": f"https://8.8.8.8/h{i}"}))
        calls.append((secret, "POST", "/webhook_endpoint/rotate_secret", None))
    responses = fire(service, calls)
    assert [r.status_code for r in responses] == [200] * len(calls), [r.text for r in responses]
    assert all(r.json()["data"]["secret"].startswith("whsec_") for r in responses)


def test_two_organizations_buying_one_name_at_once_one_wins(service: RunningService) -> None:
    orgs = [service.new_org("First"), service.new_org("Second")]
    secrets = []
    for org in orgs:
        credit(service, org, 100_000)
        secrets.append(service.new_key(org, "live"))
    body = {"domains": [{"domain": "contested-name.com"}]}
    calls = [(secrets[i % 2], "POST", "/domains/purchase", body) for i in range(8)]
    responses = fire(service, calls)
    won = [i for i, r in enumerate(responses) if r.status_code == 201]
    assert len(won) == 1, [r.text for r in responses]
    winner = won[0] % 2
    for i, lost in enumerate(responses):
        if i in won:
            continue
        assert lost.status_code == 409, lost.text
        assert lost.json()["error"]["code"] == "domains_not_submittable"
        reason = lost.json()["error"]["details"]["domains"][0]["reason"]
        assert reason == ("already_owned" if i % 2 == winner else "registered")
    balances = []
    for secret in secrets:
        with service.client(secret) as client:
            balances.append(client.get("/wallet").json()["data"]["balance_cents"])
    assert sorted(balances) == [100_000 - 1299, 100_000]
    assert balances[winner] == 100_000 - 1299


def test_many_sandbox_orders_naming_one_domain_never_500(service: RunningService) -> None:
    secret = service.new_key(service.new_org(), "test")
    with service.client(secret) as client:
        imported = client.post("/domains/import", json={"domains": ["crowded.com"]})
        assert imported.status_code == 201, imported.text
        workspace = new_workspace(client)
    service.wait_projections()
    body = counts(workspace, a=1, domains=[{"domain": "crowded.com", "suite": "suite_a"}])
    responses = fire(service, [(secret, "POST", "/orders", body)] * 16)
    for response in responses:
        assert response.status_code in (201, 409), response.text
        if response.status_code == 409:
            assert response.json()["error"]["code"] == "domain_already_in_active_order"


def test_racing_imports_of_one_name_record_one_domain(service: RunningService) -> None:
    org = service.new_org()
    secret = service.new_key(org, "test")
    name = "racing-import.com"
    answers = fire(service, [(secret, "POST", "/domains/import", {"domains": [name]})] * 10)
    assert {r.status_code for r in answers} == {201}, [r.text for r in answers]
    outcomes = sorted(r.json()["data"]["domains"][0]["status"] for r in answers)
    assert outcomes.count("failed") == 9, outcomes
    service.wait_projections()
    with service.client(secret) as client:
        rows = client.get("/domains", params={"domain": name}).json()["data"]
    assert len(rows) == 1, rows
