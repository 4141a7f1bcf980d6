"""Spec 2.3, 4.1 and 4.2 (workspaces) through HTTP: the creation rules of each provider kind,
sealed credentials, customer tracking, idempotent creation, tenancy and write permissions."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from conftest import RunningService

from domain.workspaces import Workspace
from infra.ids import parse_id
from services.accounts.workspaces import credentials_of, load_workspace

SECRETS = {
    "api_key": "sk-live-9f8e7d6c5b4a3210",
    "password": "hunter2-correct-horse",
    "label": "Acme main account label",
    "email": "ops-login@acme-secret.example",
}


def _create(client: httpx.Client, body: dict[str, Any], key: str | None = None) -> httpx.Response:
    return client.post(
        "/workspaces", json=body, headers={"Idempotency-Key": key or uuid.uuid4().hex}
    )


def _error(response: httpx.Response, status: int, code: str, field: str | None) -> None:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code, error
    assert error.get("field") == field, error


def kind_m(**extra: Any) -> dict[str, Any]:
    credentials = {"api_key": SECRETS["api_key"], "label": SECRETS["label"], **extra}
    return {"name": "Main", "provider": "m", "credentials": credentials}


def kind_w(**credentials: Any) -> dict[str, Any]:
    base = {
        "api_key": SECRETS["api_key"],
        "workspace_id": "remote-77",
        "email": SECRETS["email"],
        "password": SECRETS["password"],
    }
    return {"name": "W", "provider": "w", "credentials": {**base, **credentials}}


def test_create_each_kind_and_read_it_back(service: RunningService) -> None:
    bodies = [
        {"name": "U ws", "provider": "u", "credentials": {"api_key": SECRETS["api_key"]}},
        {"name": "I ws", "provider": "i", "credentials": {"api_key": SECRETS["api_key"]}},
        kind_m(),
        kind_w(),
    ]
    with service.partner() as client:
        created = []
        for body in bodies:
            response = _create(client, body)
            assert response.status_code == 201, response.text
            data = response.json()["data"]
            assert data["workspace_id"].startswith("wrk_")
            assert data["provider"] == body["provider"]
            assert data["name"] == body["name"]
            assert data["status"] == "active"
            assert data["provider_workspace_id"]
            assert data["created_at"].endswith("Z") and len(data["created_at"]) == 24
            assert client.get(f"/workspaces/{data['workspace_id']}").json()["data"] == data
            created.append(data)
        assert created[3]["provider_workspace_id"] == "remote-77"
        assert created[3]["has_login_pair"] is True and created[2]["has_login_pair"] is False
        listed = client.get("/workspaces").json()
        assert [w["workspace_id"] for w in listed["data"]] == [
            w["workspace_id"] for w in reversed(created)
        ]
        assert listed["data"] == list(reversed(created))
        only_m = client.get("/workspaces", params={"provider": "m"}).json()["data"]
        assert [w["workspace_id"] for w in only_m] == [created[2]["workspace_id"]]


# Each violation of spec 2.3 with its code, status and field path.
CREATION_RULES: list[tuple[dict[str, Any], int, str, str | None]] = [
    ({"provider": "x", "credentials": {"api_key": "k"}}, 400, "provider_not_supported", "provider"),
    ({"provider": "u"}, 400, "invalid_request", "credentials"),
    ({"provider": "u", "credentials": {}}, 400, "invalid_request", "credentials.api_key"),
    ({"provider": "u", "credentials": {"api_key": "super_abc"}}, 400,
     "sequencer_super_admin_key", "credentials.api_key"),
    ({"provider": "u", "credentials": {"api_key": "k", "label": "x"}}, 400,
     "invalid_request", "credentials.label"),
    ({"provider": "u", "credentials": {"api_key": "invalid"}}, 422,
     "provider_credentials_invalid", "credentials.api_key"),
    ({"provider": "i", "credentials": {"api_key": "unavailable"}}, 503,
     "provider_unavailable", None),
    ({"provider": "i", "credentials": {"api_key": "k", "email": "a@b.co", "password": "p"}},
     400, "invalid_request", "credentials.email"),
    ({"provider": "i", "credentials": {"api_key": "k", "workspace_id": "r"}}, 400,
     "invalid_request", "credentials.workspace_id"),
    ({"provider": "m", "credentials": {"api_key": "k"}}, 400, "invalid_request",
     "credentials.label"),
    (kind_m(email="a@b.co"), 400, "provider_login_credentials_required",
     "credentials.password"),
    (kind_m(password="p"), 400, "provider_login_credentials_required", "credentials.email"),
    (kind_m(client_id=12), 400, "invalid_request", "credentials.client_id"),
    ({**kind_m(), "client_id": 12}, 400, "invalid_request", "client_id"),
    ({**kind_m(), "customer": {"external_id": "c1"}}, 400, "invalid_request", "customer"),
    (kind_m(workspace_id="r"), 400, "invalid_request", "credentials.workspace_id"),
    (kind_w(workspace_id=None), 400, "invalid_request", "credentials.workspace_id"),
    (kind_w(email=None), 400, "provider_login_credentials_required", "credentials.email"),
    (kind_w(password=None), 400, "provider_login_credentials_required",
     "credentials.password"),
    (kind_w(email=None, password=None), 400, "provider_login_credentials_required",
     "credentials.email"),
    (kind_w(label="l"), 400, "invalid_request", "credentials.label"),
    (kind_w(password="invalid"), 422, "provider_credentials_invalid", "credentials.password"),
    ({"provider": "u", "credentials": {"api_key": "k", "foo": 1}}, 400, "invalid_request",
     "credentials.foo"),
    ({"credentials": {"api_key": "k"}}, 400, "invalid_request", "provider"),
    ({"provider": "u", "credentials": {"api_key": "k" * 1001}}, 400, "invalid_request",
     "credentials.api_key"),
    (kind_w(password="p" * 1001), 400, "invalid_request", "credentials.password"),
]


def test_creation_rules(service: RunningService) -> None:
    with service.partner() as client:
        for body, status, code, field in CREATION_RULES:
            response = _create(client, body)
            error = response.json()["error"]
            got = (response.status_code, error["code"], error.get("field"))
            assert got == (status, code, field), body
        assert client.get("/workspaces").json()["data"] == []


def test_kind_m_saves_an_optional_login_pair(service: RunningService) -> None:
    with service.partner() as client:
        body = kind_m(email=SECRETS["email"], password=SECRETS["password"])
        data = _create(client, body).json()["data"]
    assert data["has_login_pair"] is True
    workspace = _workspace(service, data["workspace_id"])
    assert workspace.provider == "m" and workspace.has_login_pair
    assert workspace.client_ids == [] and workspace.customer_id is None


def _workspace(service: RunningService, workspace_id: str) -> Workspace:
    """Through the loader orders use, as the owning tenant."""
    stored = service.container.store.find(parse_id("wrk", workspace_id), Workspace)
    return load_workspace(service.container, stored.org_id, "test", workspace_id)


def test_credentials_never_leave_in_clear_text(service: RunningService) -> None:
    with service.partner() as client:
        bodies = [resp for resp in (
            _create(client, kind_w()),
            _create(client, kind_m(email=SECRETS["email"], password=SECRETS["password"])),
        )]
        wrk = bodies[0].json()["data"]["workspace_id"]
        new_secret = "sk-rotated-5566778899"
        bodies.append(client.patch(f"/workspaces/{wrk}", json={"credentials": {
            "api_key": new_secret, "workspace_id": "remote-77",
            "email": SECRETS["email"], "password": "new-pass-0042"}}))
        bodies += [client.get(f"/workspaces/{wrk}"), client.get("/workspaces")]
    assert all(r.status_code in (200, 201) for r in bodies)
    secrets = [SECRETS["api_key"], SECRETS["password"], SECRETS["label"], SECRETS["email"],
               new_secret, "new-pass-0042"]
    for response in bodies:
        for secret in secrets:
            assert secret not in response.text
    stored = service.container.store.recorder.select_notifications(start=1, limit=10000)
    raw = b"".join(n.state for n in stored)
    assert b"CredentialsReplaced" in raw or len(stored) > 3
    for secret in secrets:
        assert secret.encode() not in raw
    workspace = _workspace(service, wrk)
    assert credentials_of(service.container, workspace).api_key == new_secret


def test_patch_revalidates_and_keeps_the_kind_rules(service: RunningService) -> None:
    with service.partner() as client:
        wrk = _create(client, kind_m()).json()["data"]
        path = f"/workspaces/{wrk['workspace_id']}"
        _error(client.patch(path, json={"credentials": {"api_key": "invalid", "label": "l"}}),
               422, "provider_credentials_invalid", "credentials.api_key")
        _error(client.patch(path, json={"credentials": {"api_key": "k"}}), 400,
               "invalid_request", "credentials.label")
        # The kind is fixed: another one is a mismatch, the same one a no-op.
        _error(client.patch(path, json={"provider": "u"}), 409, "provider_mismatch", "provider")
        _error(client.patch(path, json={"provider": "x"}), 400, "provider_not_supported", "provider")
        assert client.patch(path, json={"provider": "m"}).status_code == 200
        updated = client.patch(path, json={
            "name": "Renamed",
            "credentials": {"api_key": "k2", "label": "l", "email": "x@y.co", "password": "pw"},
        })
        assert updated.status_code == 200, updated.text
        data = updated.json()["data"]
        assert data["name"] == "Renamed" and data["has_login_pair"] is True
        assert data["provider_workspace_id"] == wrk["provider_workspace_id"]
        assert data["created_at"] == wrk["created_at"]
        assert client.get("/workspaces").json()["data"] == [data]


def test_customer_tracking(service: RunningService) -> None:
    customer = {"external_id": "crm-42", "name": "Beta Co", "email": "owner@beta.example"}
    with service.partner() as client:
        first = _create(client, {"provider": "u", "credentials": {"api_key": "k"},
                                 "customer": customer}).json()["data"]
        second = _create(client, {"provider": "i", "credentials": {"api_key": "k"},
                                  "customer": customer}).json()["data"]
        _error(_create(client, {"provider": "u", "credentials": {"api_key": "k"},
                                "customer": {"email": "nope"}}), 400, "invalid_request",
               "customer.email")
        assert first["customer_id"].startswith("cus_")
        assert first["customer"] == {"id": first["customer_id"], **customer}
        assert second["customer_id"] == first["customer_id"]
        found = client.get("/workspaces", params={"customer_id": first["customer_id"]})
        assert {w["workspace_id"] for w in found.json()["data"]} == {
            first["workspace_id"], second["workspace_id"]}
    with service.partner() as other:
        third = _create(other, {"provider": "u", "credentials": {"api_key": "k"},
                                "customer": customer}).json()["data"]
    assert third["customer_id"] != first["customer_id"]


def test_idempotent_creation(service: RunningService) -> None:
    body = {"name": "Once", "provider": "u", "credentials": {"api_key": "k"}}
    with service.partner() as client:
        missing = client.post("/workspaces", json=body)
        _error(missing, 400, "idempotency_key_required", "Idempotency-Key")
        first = _create(client, body, key="abc")
        again = _create(client, body, key="abc")
        assert again.status_code == 201 and again.json() == first.json()
        assert again.headers.get("Idempotent-Replayed") == "true"
        _error(_create(client, {**body, "name": "Other"}, key="abc"), 409,
               "idempotency_conflict", "Idempotency-Key")
        assert len(client.get("/workspaces").json()["data"]) == 1
        # A failed attempt is not remembered: the same key may be used again once fixed.
        bad = {"provider": "u", "credentials": {"api_key": "unavailable"}}
        unavailable = _create(client, bad, key="retry-me")
        _error(unavailable, 503, "provider_unavailable", None)
        assert int(unavailable.headers["Retry-After"]) >= 1
        fixed = _create(client, bad | {"credentials": {"api_key": "k"}}, key="retry-me")
        assert fixed.status_code == 201


def test_tenancy_and_permissions(service: RunningService) -> None:
    org = service.new_org()
    body = {"provider": "u", "credentials": {"api_key": "k"}}
    with service.client(service.new_key(org, "test")) as sandbox:
        wrk = _create(sandbox, body).json()["data"]["workspace_id"]
    path = f"/workspaces/{wrk}"
    with service.client(service.new_key(org, "live")) as live, service.partner() as stranger:
        for client in (live, stranger):
            _error(client.get(path), 404, "not_found", "workspace_id")
            _error(client.patch(path, json={"name": "x"}), 404, "not_found", "workspace_id")
            assert client.get("/workspaces").json()["data"] == []
        _error(live.get("/workspaces/wrk_nope"), 404, "not_found", "workspace_id")
    for preset in ("read", "limited"):
        with service.client(service.new_key(org, "test", preset)) as client:
            _error(_create(client, body), 403, "forbidden", None)
            _error(client.patch(path, json={"name": "x"}), 403, "forbidden", None)
            assert client.get(path).status_code == 200


def test_list_pages(service: RunningService) -> None:
    with service.partner() as client:
        ids = [
            _create(client, {"provider": "u", "credentials": {"api_key": f"k{i}"}}).json()[
                "data"]["workspace_id"] for i in range(3)
        ]
        page = client.get("/workspaces", params={"per_page": 2}).json()
        assert [w["workspace_id"] for w in page["data"]] == ids[::-1][:2]
        assert page["meta"]["returned"] == 2 and page["links"]["next"]
        rest = client.get(page["links"]["next"].removeprefix("/partner/v1")).json()
        assert [w["workspace_id"] for w in rest["data"]] == ids[:1]
        assert rest["links"]["next"] is None
        _error(client.get("/workspaces", params={"provider": "z"}), 400, "invalid_request",
               "provider")


def test_kind_w_credentials_for_another_remote_workspace_are_a_conflict(
    service: RunningService,
) -> None:
    """Replacing credentials must not move the routing target of orders already placed."""
    with service.partner() as client:
        wrk = _create(client, kind_w()).json()["data"]
        path = f"/workspaces/{wrk['workspace_id']}"
        moved = kind_w(workspace_id="remote-88")["credentials"]
        _error(client.patch(path, json={"credentials": moved}), 409,
               "workspace_credentials_conflict", "credentials.workspace_id")
        kept = client.get(path).json()["data"]
        assert kept["provider_workspace_id"] == "remote-77" and kept == wrk
        rotated = client.patch(path, json={"credentials": kind_w(api_key="sk-new-1")["credentials"]})
        assert rotated.status_code == 200, rotated.text
        assert rotated.json()["data"]["provider_workspace_id"] == "remote-77"


def test_live_work_routed_to_a_sandbox_workspace_needs_promotion(service: RunningService) -> None:
    """A live key naming its organization's sandbox workspace is told to create a live one
    (409 workspace_promotion_required); another organization's stays unknown (404)."""
    org = service.new_org()
    with service.client(service.new_key(org, "test")) as sandbox:
        wrk = _create(sandbox, kind_m(email="a@b.co", password="pw-1")).json()["data"]
    sandbox_id = wrk["workspace_id"]
    order = {"destination": {"workspace_id": sandbox_id}, "suite_a": {"domains": 1,
             "inboxes_per_domain": 1}}
    with service.client(service.new_key(org, "live")) as live:
        placed = live.post("/orders", json=order, headers={"Idempotency-Key": uuid.uuid4().hex})
        _error(placed, 409, "workspace_promotion_required", "destination.workspace_id")
        assert placed.json()["error"]["details"] == {
            "workspace_id": sandbox_id, "environment": "test"
        }
        _error(live.post("/quotes", json=order), 409, "workspace_promotion_required",
               "destination.workspace_id")
        user = {"workspace_id": sandbox_id, "email": "u@b.co", "first_name": "U",
                "last_name": "V"}
        _error(live.post("/users", json=user), 409, "workspace_promotion_required",
               "workspace_id")
        _error(live.post("/pool/attach", json={"workspace_id": sandbox_id, "quantity": 1}),
               409, "workspace_promotion_required", "workspace_id")
        _error(live.post("/domains/import/jobs", json={"domains": ["promo-x.com"],
                                                        "workspace_id": sandbox_id}),
               409, "workspace_promotion_required", "workspace_id")
        _error(live.get(f"/workspaces/{sandbox_id}"), 404, "not_found", "workspace_id")
    with service.partner(env="live") as stranger:
        unknown = stranger.post("/orders", json=order,
                                headers={"Idempotency-Key": uuid.uuid4().hex})
        _error(unknown, 404, "not_found", "destination.workspace_id")
