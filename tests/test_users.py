"""Spec 2.7 and 4.1 (users) through HTTP: a user is a client created inside a kind m workspace
through the sequencer adapter; the workspace then knows the client id orders may route to."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from conftest import RunningService

from domain.errors import DomainError
from domain.workspaces import Workspace
from infra.ids import parse_id
from services.accounts.workspaces import check_client, load_workspace


def _error(response: httpx.Response, status: int, code: str, field: str | None) -> None:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert (error["code"], error.get("field")) == (code, field), error


def _workspace(client: httpx.Client, provider: str = "m") -> str:
    credentials: dict[str, Any] = {"api_key": "main-key"}
    if provider == "m":
        credentials["label"] = "Main"
    response = client.post(
        "/workspaces",
        json={"provider": provider, "credentials": credentials},
        headers={"Idempotency-Key": uuid.uuid4().hex},
    )
    assert response.status_code == 201, response.text
    workspace_id: str = response.json()["data"]["workspace_id"]
    return workspace_id


def _user_body(workspace_id: str, **overrides: Any) -> dict[str, Any]:
    return {"workspace_id": workspace_id, "email": "ann@client.example", "first_name": "Ann",
            "last_name": "Lee", **overrides}


def test_create_get_list_and_client_ids(service: RunningService) -> None:
    with service.partner() as client:
        wrk = _workspace(client)
        first = client.post("/users", json=_user_body(wrk))
        assert first.status_code == 201, first.text
        user = first.json()["data"]
        assert user["id"].startswith("usr_")
        assert (user["email"], user["first_name"], user["last_name"]) == (
            "ann@client.example", "Ann", "Lee")
        assert user["status"] == "active"
        assert user["sequencer"] == {"provider": "m", "client_id": 1001}
        assert user["workspace_id"] == wrk and user["created_at"].endswith("Z")
        second = client.post("/users", json=_user_body(wrk, email="bo@client.example")).json()
        assert second["data"]["sequencer"]["client_id"] == 1002
        assert client.get(f"/users/{user['id']}").json()["data"] == user
        listed = client.get("/users").json()["data"]
        assert listed == [second["data"], user]
        other_wrk = _workspace(client)
        assert client.get("/users", params={"workspace_id": other_wrk}).json()["data"] == []
        assert client.get("/workspaces").json()["data"][-1]["workspace_id"] == wrk
    stored = service.container.store.find(parse_id("wrk", wrk), Workspace)
    workspace = load_workspace(service.container, stored.org_id, "test", wrk)
    assert workspace.client_ids == [1001, 1002] and workspace.has_client(1002)
    check_client(workspace, 1001)
    with pytest.raises(DomainError) as missing:
        check_client(workspace, 999)
    assert missing.value.code == "sequencer_client_not_found"


def test_rules_and_errors(service: RunningService) -> None:
    with service.partner() as client:
        kind_u = _workspace(client, "u")
        wrk = _workspace(client)
        _error(client.post("/users", json=_user_body(kind_u)), 400, "provider_not_supported",
               "workspace_id")
        _error(client.post("/users", json=_user_body("wrk_" + "0" * 32)), 404, "not_found",
               "workspace_id")
        _error(client.post("/users", json=_user_body(wrk, email="not-an-email")), 400,
               "invalid_request", "email")
        _error(client.post("/users", json=_user_body(wrk, first_name=" ")), 400,
               "invalid_request", "first_name")
        _error(client.post("/users", json=_user_body(wrk, client_id=5)), 400,
               "invalid_request", "client_id")
        _error(client.post("/users", json={"workspace_id": wrk}), 400, "invalid_request",
               "email")
        _error(client.get("/users/usr_nope"), 404, "not_found", "user_id")
        assert client.get("/users").json()["data"] == []


def test_tenancy_and_permissions(service: RunningService) -> None:
    org = service.new_org()
    with service.client(service.new_key(org, "test")) as owner:
        wrk = _workspace(owner)
        user = owner.post("/users", json=_user_body(wrk)).json()["data"]
    with service.client(service.new_key(org, "live")) as live, service.partner() as stranger:
        for client in (live, stranger):
            _error(client.get(f"/users/{user['id']}"), 404, "not_found", "user_id")
            assert client.get("/users").json()["data"] == []
        # The organization's own sandbox workspace is not a live one (test_workspaces.py).
        _error(live.post("/users", json=_user_body(wrk)), 409, "workspace_promotion_required",
               "workspace_id")
        _error(stranger.post("/users", json=_user_body(wrk)), 404, "not_found", "workspace_id")
    for preset in ("read", "limited"):
        with service.client(service.new_key(org, "test", preset)) as client:
            _error(client.post("/users", json=_user_body(wrk)), 403, "forbidden", None)
            assert client.get(f"/users/{user['id']}").status_code == 200


def test_concurrent_users_get_distinct_client_ids(service: RunningService) -> None:
    with service.partner() as client:
        wrk = _workspace(client)

        def create(i: int) -> int:
            response = client.post("/users", json=_user_body(wrk, email=f"u{i}@c.example"))
            assert response.status_code == 201, response.text
            client_id: int = response.json()["data"]["sequencer"]["client_id"]
            return client_id

        with ThreadPoolExecutor(4) as pool:
            ids = list(pool.map(create, range(4)))
    assert sorted(ids) == [1001, 1002, 1003, 1004]


def test_openapi_documents_the_catalog(service: RunningService) -> None:
    with service.client() as client:
        schema = client.get("/schema/openapi.json").json()
    operations = {
        op["operationId"] for path in schema["paths"].values() for op in path.values()
        if isinstance(op, dict) and "operationId" in op
    }
    assert {"createWorkspace", "listWorkspaces", "getWorkspace", "updateWorkspace",
            "createBundle", "listBundles", "getBundle", "updateBundle", "archiveBundle",
            "createUser", "listUsers", "getUser"} <= operations
