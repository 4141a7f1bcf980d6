"""Pool add eligibility, attach (all or nothing, kind m login rule), release, the list, events."""

from __future__ import annotations

from typing import Any

from conftest import RunningService
from pool_support import (
    add,
    attach,
    attached,
    conditions,
    finished,
    ordered_domains,
    pooled,
    released,
)
from test_orders_sandbox import error_of, new_workspace


def test_add_is_all_or_nothing_with_a_reason_per_refused_domain(service: RunningService) -> None:
    with service.partner() as client:
        suite_a, suite_b = ordered_domains(client, a=1, b=1)
        error = error_of(add(client, suite_a, suite_b, "nowhere.com"), 409,
                         "domains_not_submittable")
        assert error["details"]["domains"] == [
            {"domain": suite_b, "reason": "not_on_suite_a_order"},
            {"domain": "nowhere.com", "reason": "not_in_inventory"},
        ]
        assert conditions(client) == {}
        first = add(client, suite_a).json()["data"]
        assert first["added"] == 1 and first["domains"][0]["condition"] == "available"
        assert first["domains"][0]["inbox_count"] == 3
        again = add(client, suite_a).json()["data"]
        assert (again["added"], again["already_pooled"]) == (0, 1)
    with service.partner() as other:
        refused = error_of(add(other, suite_a), 409, "domains_not_submittable")
        assert refused["details"]["domains"][0]["reason"] == "not_in_inventory"


def test_attach_takes_the_exact_quantity_or_changes_nothing(service: RunningService) -> None:
    with service.partner() as client:
        names = pooled(client, 3)
        workspace = new_workspace(client)
        error = error_of(attach(client, workspace, 4), 409, "insufficient_inventory")
        assert error["details"] == {"requested": 4, "available": 3}
        assert set(conditions(client).values()) == {"available"}
        reservation = attached(client, workspace, 2)
        assert reservation["id"].startswith("pcl_")
        assert reservation["status"] == "completed" and reservation["quantity"] == 2
        taken = {d["domain"] for d in reservation["domains"]}
        assert len(taken) == 2 and taken <= set(names)
        shown = client.get(f"/pool/reservations/{reservation['id']}").json()["data"]
        assert shown == reservation
        now = conditions(client)
        assert {n for n, c in now.items() if c == "assigned"} == taken
        assigned = client.get("/pool/domains", params={"condition": "assigned"}).json()["data"]
        assert {row["domain"] for row in assigned} == taken
        assert all(row["workspace_id"] == workspace for row in assigned)
        error_of(attach(client, workspace, 2), 409, "insufficient_inventory")
    with service.partner() as other:
        error_of(other.get(f"/pool/reservations/{reservation['id']}"), 404, "not_found")


def test_attach_with_an_idempotency_key_is_safe_to_retry(service: RunningService) -> None:
    with service.partner() as client:
        pooled(client, 2)
        workspace = new_workspace(client)
        body = {"workspace_id": workspace, "quantity": 1}
        headers = {"Idempotency-Key": "attach-1"}
        first = client.post("/pool/attach", json=body, headers=headers)
        again = client.post("/pool/attach", json=body, headers=headers)
        assert first.status_code == again.status_code == 202, again.text
        assert again.headers["Idempotent-Replayed"] == "true"
        assert again.json() == first.json()
        finished(client, f"/pool/reservations/{first.json()['data']['id']}")
        assert sorted(conditions(client).values()) == ["assigned", "available"]


def test_attach_body_and_target_rules(service: RunningService) -> None:
    with service.partner() as client:
        pooled(client, 1)
        workspace = new_workspace(client)
        error = error_of(attach(client, workspace, 0), 400, "invalid_request")
        assert error["field"] == "quantity"
        bad = client.post("/pool/attach", json={"workspace_id": workspace})
        assert error_of(bad, 400, "invalid_request")["field"] == "quantity"
        extra = attach(client, workspace, 1, colour="red")
        assert error_of(extra, 400, "invalid_request")["field"] == "colour"
        unknown = error_of(attach(client, "wrk_" + "0" * 32, 1), 404, "not_found")
        assert unknown["field"] == "workspace_id"
        error = error_of(attach(client, workspace, 1, client_id=3), 400, "invalid_request")
        assert error["field"] == "client_id"
        kind_m = new_workspace(client, "m", label="Main")
        error = error_of(attach(client, kind_m, 1), 400, "provider_login_credentials_required")
        assert error["field"] == "workspace_id"
        assert set(conditions(client).values()) == {"available"}
        with_login = new_workspace(client, "m", label="Main", email="a@b.co", password="pw-123456")
        assert attached(client, with_login, 1)["status"] == "completed"


def test_release_returns_domains_to_the_pool(service: RunningService) -> None:
    with service.partner() as client:
        names = pooled(client, 2)
        workspace = new_workspace(client)
        reservation = attached(client, workspace, 1)
        taken = reservation["domains"][0]["domain"]
        free = next(n for n in names if n != taken)
        refused = error_of(client.post("/pool/release", json={"domains": [taken, free]}), 409,
                           "pool_state_conflict")
        assert refused["details"]["domains"] == [{"domain": free, "condition": "available"}]
        release = released(client, taken)
        assert release["id"].startswith("prl_") and release["status"] == "completed"
        assert client.get(f"/pool/releases/{release['id']}").json()["data"] == release
        assert conditions(client) == {taken: "available", free: "available"}
        error = error_of(client.get("/pool/domains", params={"condition": "gone"}), 400,
                         "invalid_request")
        assert error["field"] == "condition"


def test_pool_list_pages(service: RunningService) -> None:
    with service.partner() as client:
        names = pooled(client, 3)
        first = client.get("/pool/domains", params={"per_page": 2}).json()
        assert len(first["data"]) == 2 and first["links"]["next"]
        second = client.get(first["links"]["next"].removeprefix("/partner/v1")).json()
        seen = [row["domain"] for row in first["data"] + second["data"]]
        assert sorted(seen) == sorted(names)
        assert all(row["id"].startswith("dom_") for row in first["data"])


def test_pool_events(service: RunningService) -> None:
    with service.partner() as client:
        names = pooled(client, 2)
        reservation = attached(client, new_workspace(client), 1)
        released(client, reservation["domains"][0]["domain"])
        client.post("/pool/remove", json={"domains": names})
        service.wait_projections()
        events = client.get("/events", params={"per_page": 100}).json()["data"]
        by_type: dict[str, list[dict[str, Any]]] = {}
        for event in events:
            by_type.setdefault(event["type"], []).append(event)
        assert len(by_type["pool.domain_added"]) == 2
        added = by_type["pool.domain_added"][0]["data"]
        assert added["condition"] == added["status"] == "available"
        assert by_type["pool.attach_in_progress"][0]["data"]["status"] == "in_progress"
        assert by_type["pool.attach_completed"][0]["data"] == reservation
        assert by_type["pool.release_in_progress"][0]["data"]["status"] == "in_progress"
        assert by_type["pool.release_completed"][0]["data"]["status"] == "completed"
        assert len(by_type["pool.domain_removed"]) == 2


def test_openapi_documents_the_pool_and_its_events(service: RunningService) -> None:
    with service.client() as client:
        schema = client.get("/schema/openapi.json").json()
    operations = {
        op["operationId"]: op for path in schema["paths"].values() for op in path.values()
        if isinstance(op, dict) and "operationId" in op
    }
    assert {"addPoolDomains", "removePoolDomains", "attachPoolDomains", "releasePoolDomains",
            "listPoolDomains", "getPoolReservation", "getPoolRelease", "getPoolReplacement",
            "getBurnedDomainJob"} <= set(operations)
    described = operations["attachPoolDomains"]["description"]
    assert "pool.attach_completed" in described and "insufficient_inventory" in described


def test_attach_skips_a_domain_whose_order_is_being_cancelled(service: RunningService) -> None:
    with service.partner() as client:
        [name] = pooled(client, 1)
        order_id = client.get("/pool/domains").json()["data"][0]["order_id"]
        assert client.post(f"/orders/{order_id}/cancel").status_code in (200, 202)
        workspace = new_workspace(client)
        error_of(attach(client, workspace, 1), 409, "insufficient_inventory")
        assert name not in conditions(client)  # the cancel took it out of the pool
