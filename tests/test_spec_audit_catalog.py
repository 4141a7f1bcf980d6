"""Spec audit of the catalog resources (spec 2.2-2.7, 4.1, 4.2; decisions.md 3): the letter of
the shapes, filters and paging of bundles, workspaces, users, availability rows, import jobs and
the TLD catalog, on both stores."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from conftest import RunningService


def _page(client: httpx.Client, path: str, **params: Any) -> dict[str, Any]:
    response = client.get(path, params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert set(body) == {"data", "links", "meta"}, body
    assert set(body["links"]) == {"first", "next"} and set(body["meta"]) == {
        "path",
        "per_page",
        "returned",
    }
    assert body["meta"]["returned"] == len(body["data"])
    return body


def _follow(client: httpx.Client, link: str) -> dict[str, Any]:
    response = client.get(link.split("/partner/v1", 1)[-1])
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_tld_catalog_is_paged_like_every_list(service: RunningService) -> None:
    with service.partner(preset="read") as client:
        whole = _page(client, "/domains/tlds")
        assert whole["links"]["next"] is None and whole["meta"]["per_page"] == 25
        assert {"tld": "com", "name": ".com"} in whole["data"]
        assert all(set(t) == {"tld", "name"} for t in whole["data"])  # no prices or availability
        first = _page(client, "/domains/tlds", per_page=2)
        assert first["data"] == whole["data"][:2] and first["links"]["next"]
        rest: list[dict[str, Any]] = list(first["data"])
        link = first["links"]["next"]
        while link:
            following = _follow(client, link)
            rest += following["data"]
            link = following["links"]["next"]
        assert rest == whole["data"]
        for bad in ({"per_page": 0}, {"per_page": 101}, {"page_token": "forged"}):
            error = client.get("/domains/tlds", params=bad).json()["error"]
            assert (error["code"], error["field"]) == ("invalid_request", next(iter(bad)))


def test_workspace_provider_filter_takes_the_spec_kind_letters(service: RunningService) -> None:
    with service.partner() as client:
        created = client.post(
            "/workspaces",
            json={"provider": "U", "credentials": {"api_key": "user-level-key"}},
            headers={"Idempotency-Key": uuid.uuid4().hex},
        )
        assert created.status_code == 201, created.text
        workspace = created.json()["data"]
        assert workspace["workspace_id"].startswith("wrk_") and workspace["status"] == "active"
        assert "credentials" not in workspace and "api_key" not in str(workspace)
        for letter in ("U", "u"):
            listed = _page(client, "/workspaces", provider=letter)
            assert [w["workspace_id"] for w in listed["data"]] == [workspace["workspace_id"]]
        assert _page(client, "/workspaces", provider="W")["data"] == []
        error = client.get("/workspaces", params={"provider": "x"}).json()["error"]
        assert (error["code"], error["field"]) == ("invalid_request", "provider")


def test_import_waiting_for_nameservers_keeps_timestamps_in_order(
    service: RunningService,
) -> None:
    with service.partner() as client:
        response = client.post("/domains/import", json={"domains": ["nsnever-audit.com"]})
        assert response.status_code == 201, response.text
        job = response.json()["data"]
        assert job["id"].startswith("imp_") and job["status"] == "action_required"
        assert job["completed_at"] is None and job["created_at"].endswith("Z")
        group = job["nameserver_groups"][0]
        assert set(group) == {"nameserver_one", "nameserver_two", "domains"}
        row = client.get("/domains", params={"domain": "nsnever-audit.com"}).json()["data"][0]
        assert row["status"] == "action_required" and row["category"] == "inventory"
        assert "provider" not in row
        # Both are ISO 8601 UTC with milliseconds, so text order is time order.
        assert row["updated_at"] >= row["created_at"], row
        listed = _page(client, "/domains/import/jobs", status="action_required")
        assert [j["id"] for j in listed["data"]] == [job["id"]]
        by_name = _page(client, "/domains/import/jobs", domain="NSNEVER-audit.com")
        assert [j["id"] for j in by_name["data"]] == [job["id"]]


def test_availability_rows_follow_spec_2_5(service: RunningService) -> None:
    with service.partner(preset="limited") as client:
        names = ["fresh-audit.com", "taken-audit.com", "premiumaudit.com", "not a name"]
        response = client.post("/domains/availability", json={"domains": names})
        assert response.status_code == 200, response.text
        rows = response.json()["data"]["domains"]
        assert [r["domain"] for r in rows] == ["fresh-audit.com", *names[1:]]
        fresh = rows[0]
        assert fresh["available"] is True and "reason" not in fresh
        assert fresh["usable_for"] == ["suite_a", "suite_b"] and fresh["currency"] == "usd"
        assert isinstance(fresh["price_cents"], int) and isinstance(
            fresh["renewal_price_cents"], int
        )
        for row in rows[1:]:
            assert row["available"] is False and isinstance(row["reason"], str), row
        too_many = [f"n{i}.com" for i in range(51)]
        error = client.post("/domains/availability", json={"domains": too_many}).json()["error"]
        assert (error["code"], error["field"]) == ("invalid_request", "domains")
