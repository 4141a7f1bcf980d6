"""The domain inventory and forwarding through HTTP (spec 2.4; decisions.md 3)."""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx
from conftest import PATIENCE, RunningService
from test_orders_sandbox import counts, new_workspace, settled

from infra.clock import ManualClock


def order(client: httpx.Client, **extra: Any) -> dict[str, Any]:
    created = client.post(
        "/workspaces",
        json={"name": "W", "provider": "u", "credentials": {"api_key": "key_good"}},
        headers={"Idempotency-Key": str(uuid.uuid4())},
    )
    assert created.status_code == 201, created.text
    body = {
        "destination": {"workspace_id": created.json()["data"]["workspace_id"]},
        "suite_a": {"domains": 1, "inboxes_per_domain": 1},
        "suite_b": {"domains": 1, "inboxes_per_domain": 1},
        **extra,
    }
    response = client.post("/orders", json=body, headers={"Idempotency-Key": str(uuid.uuid4())})
    return settled(client, response)


def domains(client: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    response = client.get("/domains", params=params)
    assert response.status_code == 200, response.text
    rows: list[dict[str, Any]] = response.json()["data"]
    return rows


def forward(
    client: httpx.Client, names: list[str], url: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """`POST /domains/forwarding`: the job as accepted, and as the domain worker leaves it
    (asynchronous for sandbox keys too)."""
    response = client.post("/domains/forwarding", json={"domains": names, "forwarding_url": url})
    assert response.status_code == 201, response.text
    accepted: dict[str, Any] = response.json()["data"]
    path = f"/domains/forwarding/jobs/{accepted['id']}"
    done = wait_for(lambda: (job := client.get(path).json()["data"])["status"] != "in_progress"
                    and job)
    return accepted, done


def wait_for(check: Any) -> Any:
    deadline = time.monotonic() + PATIENCE
    while not (result := check()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return result


def test_connected_rows_keep_their_id_when_released(service_factory: Any) -> None:
    clock = ManualClock()
    service = service_factory(clock=clock)
    with service.partner() as client:
        placed = order(client, forwarding_url="https://acme.example/")
        connected = domains(client, category="connected")
        assert {r["id"] for r in connected} == {d["id"] for d in placed["domains"]}
        by_suite = {r["suite"]: r for r in connected}
        a, b = by_suite["suite_a"], by_suite["suite_b"]
        assert a["status"] == "active" and a["provider"] == "suite_a"
        assert a["order_id"] == placed["id"] and a["forwarding_url"] == "https://acme.example/"
        assert "customer_id" in a
        assert a["usable_for"] == ["suite_a", "suite_b"] and b["usable_for"] == ["suite_a"]
        assert domains(client, category="inventory") == []
        assert domains(client, status="active", domain=a["domain"])[0]["id"] == a["id"]
        assert client.get(f"/domains/{a['id']}").json()["data"] == a

        cancel = client.post(f"/orders/{placed['id']}/cancel")
        assert cancel.status_code in (200, 202), cancel.text
        clock.advance(service.container.settings.cancel_grace_seconds + 1)
        # Wait for both rows: the projection may show one release before the other.
        released = wait_for(lambda: len(rows := domains(client, category="inventory")) >= 2 and rows)
        service.wait_projections()
        assert {r["id"] for r in released} == {a["id"], b["id"]}
        assert all(r["status"] == "available" and "provider" not in r for r in released)
        assert domains(client, category="connected") == []
        assert client.get("/domains", params={"category": "x"}).status_code == 400
        assert client.get("/domains", params={"status": "x"}).status_code == 400
        assert client.get("/domains/dom_nope").status_code == 404


def test_forwarding_jobs_and_events(service: RunningService) -> None:
    with service.partner() as client:
        client.post("/domains/import", json={"domains": ["fw1.com", "fw2.com"]})
        url = "https://landing.example/"
        accepted, job = forward(client, ["fw1.com"], url)
        assert accepted["id"].startswith("fwj_") and accepted["status"] == "in_progress"
        assert accepted["completed"] == [] and accepted["pending"] == ["fw1.com"]
        assert job["status"] == "completed"
        assert job["completed"] == ["fw1.com"] and job["pending"] == []
        assert domains(client, domain="fw1.com")[0]["forwarding_url"] == url
        assert client.get(f"/domains/forwarding/jobs/{job['id']}").json()["data"] == job

        # Decisions 3: `completed` at acceptance lists only the already-correct domains.
        # Scheme and host compare without case: fw1.com is already correct.
        accepted, again = forward(client, ["fw1.com", "fw2.com"], "HTTPS://Landing.EXAMPLE/")
        assert (accepted["completed"], accepted["pending"]) == (["fw1.com"], ["fw2.com"])
        assert again["forwarding_url"] == url
        assert again["completed"] == ["fw1.com", "fw2.com"]
        service.wait_projections()
        updated = client.get("/events", params={"type": "domain.forwarding_updated"}).json()
        assert sorted(e["data"]["domain"] for e in updated["data"]) == ["fw1.com", "fw2.com"]
        # `status` is the domain's own (a dom_ resource); the change's outcome is apart.
        assert {e["data"]["status"] for e in updated["data"]} == {"available"}
        assert {e["data"]["forwarding_status"] for e in updated["data"]} == {"completed"}

        _, bad = forward(client, ["fw1.com"], "https://nowhere.invalid/")
        assert bad["status"] == "failed" and bad["failed"] == ["fw1.com"]
        service.wait_projections()
        assert domains(client, domain="fw1.com")[0]["forwarding_url"] == url
        failed = client.get("/events", params={"type": "domain.forwarding_failed"}).json()["data"]
        assert [e["data"]["domain"] for e in failed] == ["fw1.com"]
        assert (failed[0]["data"]["status"], failed[0]["data"]["forwarding_status"]) == (
            "available",
            "failed",
        )

        unknown = client.post(
            "/domains/forwarding", json={"domains": ["nope.com"], "forwarding_url": url}
        )
        assert unknown.status_code == 409
        assert unknown.json()["error"]["code"] == "domain_not_imported"
        assert unknown.json()["error"]["field"] == "domains[0]"
        not_url = client.post(
            "/domains/forwarding", json={"domains": ["fw1.com"], "forwarding_url": "x"}
        )
        assert not_url.status_code == 400 and not_url.json()["error"]["field"] == "forwarding_url"
        too_long = "https://example.org/" + "x" * 2029  # 2,049 characters
        for path, body in (
            ("/domains/forwarding", {"domains": ["fw1.com"], "forwarding_url": too_long}),
            ("/orders", {**counts(new_workspace(client), a=1), "forwarding_url": too_long}),
        ):
            refused = client.post(path, json=body, headers={"Idempotency-Key": path})
            assert refused.status_code == 400, refused.text
            assert refused.json()["error"]["field"] == "forwarding_url"
    with service.partner(preset="limited") as client:
        denied = client.post(
            "/domains/forwarding", json={"domains": ["a.com"], "forwarding_url": url}
        )
        assert denied.status_code == 403


def test_live_forwarding_is_finished_by_the_worker(service: RunningService) -> None:
    with service.partner(env="live") as client:
        assert client.post("/domains/import", json={"domains": ["live1.com"]}).status_code == 201
        job = client.post(
            "/domains/forwarding",
            json={"domains": ["live1.com"], "forwarding_url": "https://x.example/"},
        ).json()["data"]
        assert job["status"] == "in_progress" and job["pending"] == ["live1.com"]
        done = wait_for(
            lambda: (
                client.get(f"/domains/forwarding/jobs/{job['id']}").json()["data"]["status"]
                == "completed"
            )
        )
        assert done
        service.wait_projections()  # the job is read from its aggregate, the row from a projection
        assert domains(client, domain="live1.com")[0]["forwarding_url"] == "https://x.example/"
        # Live work never touches the wallet here: imports and forwarding are free.
        assert client.get("/wallet").json()["data"]["balance_cents"] == 0
