"""Spec 2.2 and 4.1 (bundles) through HTTP: sizing, the list/single naming difference, edit,
archive, the status filter with pagination, tenancy and write permissions."""

from __future__ import annotations

from typing import Any

import httpx
from conftest import RunningService

from services.catalog.sizing import size_bundle


def _error(response: httpx.Response, status: int, code: str, field: str | None) -> None:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert (error["code"], error.get("field")) == (code, field), error


def _bundle(client: httpx.Client, **overrides: Any) -> dict[str, Any]:
    body = {"name": "Starter", "monthly_sending_volume": 60_000, "send_on_weekends": False}
    response = client.post("/bundles", json={**body, **overrides})
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


def test_sizing_rule() -> None:
    # 60,000 / (30 sends * 22 weekdays) = 90.9 -> 91 inboxes; 50/50 -> 46 + 46; 3 per domain.
    sized = size_bundle(monthly_sending_volume=60_000, send_on_weekends=False,
                        suite_a_percent=None, suite_b_percent=None, suite_a_licenses=None)
    assert sized["effective"] == {"suite_a_percent": 50, "suite_b_percent": 50}
    assert sized["inboxes"] == {"suite_a": 46, "suite_b": 46, "total": 92}
    assert sized["required_domains"] == {"suite_a": 16, "suite_b": 16, "total": 32}
    # Weekends on: 30 days -> 67 inboxes; all suite_a at 2 per domain -> 34 domains.
    weekends = size_bundle(monthly_sending_volume=60_000, send_on_weekends=True,
                           suite_a_percent=100, suite_b_percent=None, suite_a_licenses=2)
    assert weekends["effective"] == {"suite_a_percent": 100, "suite_b_percent": 0}
    assert weekends["required_domains"] == {"suite_a": 34, "suite_b": 0, "total": 34}
    tiny = size_bundle(monthly_sending_volume=1, send_on_weekends=True,
                       suite_a_percent=None, suite_b_percent=30, suite_a_licenses=None)
    assert tiny["effective"] == {"suite_a_percent": 70, "suite_b_percent": 30}
    assert tiny["required_domains"] == {"suite_a": 1, "suite_b": 1, "total": 2}


def test_create_get_and_list_naming(service: RunningService) -> None:
    with service.partner() as client:
        created = _bundle(client, suite_a_percent=60, suite_a_licenses=4)
        assert created["id"].startswith("bun_")
        assert created["suite_a_percent"] == 60 and created["suite_b_percent"] is None
        assert created["effective"] == {"suite_a_percent": 60, "suite_b_percent": 40}
        assert created["suite_a_licenses"] == 4
        assert created["status"] == "active"
        assert created["send_on_weekends"] is False
        assert created["created_at"].endswith("Z")
        # 91 inboxes: 55 suite_a over 4 per domain = 14; 37 suite_b over 3 = 13.
        assert created["required_domains"] == {"suite_a": 14, "suite_b": 13, "total": 27}
        single = client.get(f"/bundles/{created['id']}").json()["data"]
        assert single == created
        row = client.get("/bundles").json()["data"][0]
        assert "suite_a_licenses" not in row
        assert row["suite_a_inboxes_per_domain"] == 4
        assert row == {k: v for k, v in single.items() if k != "suite_a_licenses"} | {
            "suite_a_inboxes_per_domain": 4}


INVALID: list[tuple[dict[str, Any], str]] = [
    ({"suite_a_percent": 70, "suite_b_percent": 20}, "suite_b_percent"),
    ({"suite_a_percent": 101}, "suite_a_percent"),
    ({"suite_b_percent": -1}, "suite_b_percent"),
    ({"monthly_sending_volume": 0}, "monthly_sending_volume"),
    ({"suite_a_licenses": 0}, "suite_a_licenses"),
    ({"name": "  "}, "name"),
    ({"colour": "red"}, "colour"),
]


def test_invalid_bodies(service: RunningService) -> None:
    base = {"name": "B", "monthly_sending_volume": 1000, "send_on_weekends": True}
    with service.partner() as client:
        for overrides, field in INVALID:
            response = client.post("/bundles", json={**base, **overrides})
            error = response.json()["error"]
            got = (response.status_code, error["code"], error.get("field"))
            assert got == (400, "invalid_request", field), overrides
        _error(client.post("/bundles", json={"name": "B"}), 400, "invalid_request",
               "monthly_sending_volume")
        assert client.get("/bundles").json()["data"] == []


def test_edit_recomputes_and_archive(service: RunningService) -> None:
    with service.partner() as client:
        bundle = _bundle(client, suite_a_percent=100, suite_a_licenses=5)
        path = f"/bundles/{bundle['id']}"
        edited = client.patch(path, json={"monthly_sending_volume": 6600, "name": "Bigger"})
        assert edited.status_code == 200, edited.text
        data = edited.json()["data"]
        # 6,600 / 660 = 10 inboxes, all suite_a at 5 per domain.
        assert data["name"] == "Bigger" and data["suite_a_licenses"] == 5
        assert data["required_domains"] == {"suite_a": 2, "suite_b": 0, "total": 2}
        reset = client.patch(path, json={"suite_a_percent": None, "suite_a_licenses": None})
        data = reset.json()["data"]
        assert data["suite_a_percent"] is None and data["suite_a_licenses"] == 3
        assert data["effective"] == {"suite_a_percent": 50, "suite_b_percent": 50}
        _error(client.patch(path, json={"name": None}), 400, "invalid_request", "name")
        _error(client.patch(path, json={"suite_b_percent": 40, "suite_a_percent": 40}), 400,
               "invalid_request", "suite_b_percent")
        archived = client.post(f"{path}/archive")
        assert archived.status_code == 200 and archived.json()["data"]["status"] == "archived"
        assert client.post(f"{path}/archive").json()["data"]["status"] == "archived"
        _error(client.patch(path, json={"name": "x"}), 409, "bundle_archived", "bundle_id")
        assert client.get(path).json()["data"]["status"] == "archived"
        # Ordering or pricing it is the same conflict with its state as editing it.
        workspace = client.post(
            "/workspaces", json={"provider": "u", "credentials": {"api_key": "k"}},
            headers={"Idempotency-Key": f"ws-{path}"},
        ).json()["data"]["workspace_id"]
        body = {"destination": {"workspace_id": workspace}, "bundle_id": path.rsplit("/", 1)[1]}
        _error(client.post("/orders", json=body, headers={"Idempotency-Key": f"o-{path}"}), 409,
               "bundle_archived", "bundle_id")
        _error(client.post("/quotes", json=body), 409, "bundle_archived", "bundle_id")
        assert client.get("/orders").json()["data"] == []


def test_status_filter_and_pages(service: RunningService) -> None:
    with service.partner() as client:
        ids = [_bundle(client, name=f"B{i}")["id"] for i in range(4)]
        client.post(f"/bundles/{ids[1]}/archive")
        active = client.get("/bundles", params={"status": "active", "per_page": 2}).json()
        assert [b["id"] for b in active["data"]] == [ids[3], ids[2]]
        assert active["meta"] == {"path": "/partner/v1/bundles", "per_page": 2, "returned": 2}
        # Links are absolute: followed as given, whatever base URL the client has.
        assert active["links"]["next"].startswith(f"{client.base_url.scheme}://")
        following = client.get(active["links"]["next"]).json()
        assert [b["id"] for b in following["data"]] == [ids[0]]
        assert following["links"]["next"] is None
        archived = client.get("/bundles", params={"status": "archived"}).json()["data"]
        assert [b["id"] for b in archived] == [ids[1]]
        assert len(client.get("/bundles").json()["data"]) == 4
        _error(client.get("/bundles", params={"status": "gone"}), 400, "invalid_request", "status")
        _error(client.get("/bundles", params={"per_page": 101}), 400, "invalid_request",
               "per_page")
        token = active["links"]["next"].split("page_token=")[1]
        _error(client.get("/bundles", params={"status": "archived", "page_token": token}), 400,
               "invalid_request", "page_token")


def test_tenancy_permissions_and_idempotency(service: RunningService) -> None:
    org = service.new_org()
    with service.client(service.new_key(org, "test")) as owner:
        bundle = _bundle(owner)
        body = {"name": "Keyed", "monthly_sending_volume": 5, "send_on_weekends": True}
        first = owner.post("/bundles", json=body, headers={"Idempotency-Key": "k1"})
        again = owner.post("/bundles", json=body, headers={"Idempotency-Key": "k1"})
        assert first.status_code == again.status_code == 201
        assert first.json() == again.json()
        assert len(owner.get("/bundles").json()["data"]) == 2
    path = f"/bundles/{bundle['id']}"
    with service.client(service.new_key(org, "live")) as live, service.partner() as stranger:
        for client in (live, stranger):
            _error(client.get(path), 404, "not_found", "bundle_id")
            _error(client.patch(path, json={"name": "x"}), 404, "not_found", "bundle_id")
            _error(client.post(f"{path}/archive"), 404, "not_found", "bundle_id")
            assert client.get("/bundles").json()["data"] == []
    for preset in ("read", "limited"):
        with service.client(service.new_key(org, "test", preset)) as client:
            _error(client.post("/bundles", json=body), 403, "forbidden", None)
            _error(client.patch(path, json={"name": "x"}), 403, "forbidden", None)
            _error(client.post(f"{path}/archive"), 403, "forbidden", None)
            assert client.get(path).json()["data"]["status"] == "active"


def test_links_use_the_public_url_when_set(service_factory: Any) -> None:
    service = service_factory(public_url="https://api.example.com")
    with service.partner() as client:
        for name in ("A", "B"):
            body = {"name": name, "monthly_sending_volume": 10000, "send_on_weekends": False}
            assert client.post("/bundles", json=body).status_code == 201
        page = client.get("/bundles", params={"per_page": 1}).json()
    assert page["links"]["first"] == "https://api.example.com/partner/v1/bundles?per_page=1"
    assert page["links"]["next"].startswith("https://api.example.com/partner/v1/bundles?")
