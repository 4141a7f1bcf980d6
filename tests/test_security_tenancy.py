"""Tenancy across every id route, secrets at rest and in logs, SSRF rules, body limits.

The id routes come from the served OpenAPI document, so a new `/{..._id}` endpoint is checked here
as soon as a resource it serves is reachable from a list (or it is named as not seeded below).
"""

from __future__ import annotations

import hashlib
import logging
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from conftest import PG_URL, RunningService
from test_orders_sandbox import wait_order

ID = re.compile(r"^[a-z]{3}_[A-Za-z0-9_-]{6,}$")
WRITE_BODY: dict[str, Any] = {}  # the lookup must refuse a foreign id before any body rule
# Kinds the seed below does not create (live-only or long-running flows, tested elsewhere).
NOT_SEEDED = ("/pool/", "/swaps/")


def _ids(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _ids(item)
    elif isinstance(value, list):
        for item in value:
            yield from _ids(item)
    elif isinstance(value, str) and ID.match(value):
        yield value


def _seed(client: httpx.Client) -> set[str]:
    """One of each resource for this tenant; returns every id its lists and answers show."""
    seen: set[str] = set()

    def post(path: str, body: dict[str, Any], status: int = 201) -> dict[str, Any]:
        response = client.post(path, json=body, headers={"Idempotency-Key": uuid.uuid4().hex})
        assert response.status_code == status, (path, response.text)
        data: dict[str, Any] = response.json()["data"]
        seen.update(_ids(data))
        return data

    workspace = post("/workspaces", {"provider": "u", "credentials": {"api_key": "key_good"}})
    kind_m = post("/workspaces", {"provider": "m", "credentials": {"api_key": "k", "label": "M"}})
    post("/users", {"workspace_id": kind_m["workspace_id"], "email": "ann@client.example",
                    "first_name": "Ann", "last_name": "Lee"})
    post("/bundles", {"name": "Starter", "monthly_sending_volume": 60_000,
                      "send_on_weekends": False})
    destination = {"workspace_id": workspace["workspace_id"]}
    suite = {"domains": 1, "inboxes_per_domain": 2}
    order = wait_order(client, post("/orders", {"destination": destination, "suite_a": suite})["id"])
    seen.update(_ids(order))
    post("/domains/forwarding", {"domains": [order["domains"][0]["domain"]],
                                 "forwarding_url": "https://acme.example/"})
    post("/orders", {"destination": destination, "suite_a": suite,
                     "profile_picture_url": "http://10.0.0.5/me.png"})
    post("/domains/import/jobs", {"domains": ["tenancy-import.com"]})
    return seen


def _list_ids(client: httpx.Client, document: dict[str, Any]) -> set[str]:
    seen: set[str] = set()
    for path, item in document["paths"].items():
        if "{" not in path and "get" in item:
            response = client.get(path.removeprefix("/partner/v1"))
            if response.status_code == 200:
                seen.update(_ids(response.json()))
    return seen


def _assert_not_found(response: httpx.Response, who: str) -> None:
    assert response.status_code == 404, (who, response.request.url, response.text)
    assert response.json()["error"]["code"] in ("not_found", "sequencer_client_not_found")


def test_every_id_route_is_404_for_other_tenants(service: RunningService) -> None:
    org = service.new_org("Owner")
    owner = service.client(service.new_key(org, "test"))
    same_org_live = service.client(service.new_key(org, "live"))
    stranger = service.partner()
    document = httpx.get(f"{service.api}/schema/openapi.json", timeout=30).json()
    candidates = _seed(owner) | _list_ids(owner, document)

    id_routes = {
        (method, path.removeprefix("/partner/v1"))
        for path, item in document["paths"].items()
        for method in item
        if re.search(r"\{[a-z_]+\}", path)
    }
    proven: dict[str, str] = {}  # GET template -> an id the owner reads there
    for method, template in sorted(id_routes):
        if method != "get" or template.count("{") != 1:
            continue
        for candidate in sorted(candidates):
            path = re.sub(r"\{[a-z_]+\}", candidate, template)
            if owner.get(path).status_code == 200:
                proven[template] = candidate
                break
    uncovered = {t for m, t in id_routes if m == "get" and t not in proven}
    assert all(any(kind in t for kind in NOT_SEEDED) for t in uncovered), uncovered
    assert len(proven) >= 8, proven
    one_per_kind = {i.split("_", 1)[0]: i for i in sorted(candidates)}

    for method, template in sorted(id_routes):
        base = re.sub(r"\{[a-z_]+\}.*", "", template)
        owned = next((i for t, i in proven.items() if t.startswith(base)), None)
        # A route with no readable sibling (resolve an action) gets one id of every kind.
        tried = [owned] if owned else list(one_per_kind.values())
        kwargs: dict[str, Any] = {} if method == "get" else {"json": WRITE_BODY}
        for candidate in tried:
            path = re.sub(r"\{[a-z_]+\}", candidate, template)
            for who, client in (("other org", stranger), ("same org, live", same_org_live)):
                _assert_not_found(client.request(method.upper(), path, **kwargs), who)
    # The foreign calls changed nothing: the owner still reads every resource as before.
    for template, owned in proven.items():
        assert owner.get(re.sub(r"\{[a-z_]+\}", owned, template)).status_code == 200


def test_live_and_sandbox_lists_never_mix(service: RunningService) -> None:
    org = service.new_org("Both")
    sandbox = service.client(service.new_key(org, "test"))
    live = service.client(service.new_key(org, "live"))
    document = httpx.get(f"{service.api}/schema/openapi.json", timeout=30).json()
    sandbox_ids = _seed(sandbox)
    assert sandbox_ids
    assert not (_list_ids(live, document) & sandbox_ids)
    assert not (_list_ids(service.partner(), document) & sandbox_ids)


def _stored_bytes(service: RunningService) -> bytes:
    """Everything the service keeps: every file of the data dir, every row of its PG schema."""
    settings = service.container.settings
    chunks = [p.read_bytes() for p in Path(settings.data_dir).rglob("*") if p.is_file()]
    if settings.uses_postgres:
        with psycopg.connect(PG_URL) as conn:
            tables = conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                (settings.database_schema,),
            ).fetchall()
            for (table,) in tables:
                rows = conn.execute(f'SELECT * FROM "{settings.database_schema}"."{table}"')
                for row in rows.fetchall():
                    chunks += [v if isinstance(v, bytes) else str(v).encode() for v in row]
    return b"\n".join(chunks)


def test_secrets_are_never_stored_or_logged_in_clear(
    service: RunningService, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    org = service.new_org("Secretive")
    key_secret = service.new_key(org, "live")
    credential = f"sk-live-{uuid.uuid4().hex}"
    password = f"pw-{uuid.uuid4().hex}"
    with service.client(key_secret) as client:
        assert client.get("/me").status_code == 200
        # With an Idempotency-Key the answers are kept for a retry: sealed like the secret.
        created = client.put(
            "/webhook_endpoint", json={"url": "https://8.8.8.8/hook"},
            headers={"Idempotency-Key": uuid.uuid4().hex},
        )
        assert created.status_code == 200, created.text
        webhook_secret = created.json()["data"]["secret"]
        rotation = {"Idempotency-Key": uuid.uuid4().hex}
        rotated = client.post("/webhook_endpoint/rotate_secret", headers=rotation).json()["data"]
        # A retry whose first answer was lost gets the secret that rotation issued.
        again = client.post("/webhook_endpoint/rotate_secret", headers=rotation)
        assert again.headers["Idempotent-Replayed"] == "true"
        assert again.json()["data"] == rotated
        rotated = rotated["secret"]
        workspace = client.post(
            "/workspaces",
            json={"provider": "m", "credentials": {"api_key": credential, "label": "M",
                                                   "email": "ops@client.example",
                                                   "password": password}},
            headers={"Idempotency-Key": uuid.uuid4().hex},
        )
        assert workspace.status_code == 201, workspace.text
        bad_key = key_secret[:-4] + "AAAA"
        assert client.get("/me", headers={"Authorization": f"Bearer {bad_key}"}).status_code == 401
    service.wait_projections()
    secrets = [key_secret, bad_key, webhook_secret, rotated, credential, password]
    stored = _stored_bytes(service)
    logged = caplog.text
    for secret in secrets:
        assert secret.encode() not in stored, secret[:12]
        assert secret not in logged, secret[:12]
    # The key is kept as its SHA-256 only.
    assert hashlib.sha256(key_secret.encode()).hexdigest().encode() in stored


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/hook",
        "https://127.1/hook",
        "https://2130706433/hook",
        "https://10.0.0.8/hook",
        "https://172.16.5.4/hook",
        "https://192.168.1.1/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/hook",
        "https://[fd00::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://0.0.0.0/hook",
        "https://localhost/hook",
        "https://metadata.google.internal/computeMetadata",
        "https://printer.local/hook",
        "https://user:pw@example.com/hook",
        "http://example.com/hook",
    ],
)
def test_webhook_urls_refuse_private_targets(service: RunningService, url: str) -> None:
    with service.partner("live") as client:
        response = client.put("/webhook_endpoint", json={"url": url})
    assert response.status_code == 400, (url, response.text)
    assert response.json()["error"]["field"] == "url"


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/landing",
        "https://2130706433/",
        "http://10.1.2.3/",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/",
        "https://localhost/",
        "https://metadata.google.internal/",
    ],
)
def test_forwarding_urls_refuse_private_targets(service: RunningService, url: str) -> None:
    with service.partner() as client:
        forwarding = client.post(
            "/domains/forwarding", json={"domains": ["fw-ssrf.com"], "forwarding_url": url}
        )
        workspace = client.post(
            "/workspaces", json={"provider": "u", "credentials": {"api_key": "key_good"}},
            headers={"Idempotency-Key": uuid.uuid4().hex},
        ).json()["data"]["workspace_id"]
        order = client.post(
            "/orders",
            json={"destination": {"workspace_id": workspace},
                  "suite_a": {"domains": 1, "inboxes_per_domain": 1}, "forwarding_url": url},
            headers={"Idempotency-Key": uuid.uuid4().hex},
        )
    for response in (forwarding, order):
        assert response.status_code == 400, (url, response.text)
        assert response.json()["error"]["field"] == "forwarding_url"


def test_private_targets_allowed_only_with_the_dev_setting(service_factory: Any) -> None:
    service = service_factory(allow_http_webhooks=True)
    with service.partner() as client:
        response = service.put_webhook(client, "http://127.0.0.1:9/hook")
        assert response.status_code == 200, response.text
        forwarding = client.post(
            "/domains/forwarding",
            json={"domains": ["nowhere.com"], "forwarding_url": "http://127.0.0.1/"},
        )
        # Past the URL rules: the domain itself is what is missing now.
        assert forwarding.json()["error"]["code"] == "domain_not_imported"


def test_body_limit_holds_for_streamed_and_hand_decoded_bodies(service: RunningService) -> None:
    limit = service.container.settings.max_body_bytes
    with service.partner() as client:
        big = b'{"destination": {"workspace_id": "' + b"x" * (limit + 10) + b'"}}'
        decoded_by_hand = client.post(
            "/orders", content=big,
            headers={"Idempotency-Key": "big", "Content-Type": "application/json"},
        )

        def chunks() -> Iterator[bytes]:
            yield b'{"url": "https://example.com/'
            for _ in range(limit // 65536 + 2):
                yield b"a" * 65536
            yield b'"}'

        streamed = service.live_twin(client).put(
            "/webhook_endpoint", content=chunks(), headers={"Content-Type": "application/json"}
        )
    for response in (decoded_by_hand, streamed):
        assert response.status_code == 413, response.text
        error = response.json()["error"]
        assert error["code"] == "payload_too_large"
        assert error["request_id"] == response.headers["Service-Request-Id"]


def test_signature_checks_refuse_odd_input_without_raising() -> None:
    from webhooks.signing import (
        EVENT_ID_HEADER,
        SIGNATURE_HEADER,
        TIMESTAMP_HEADER,
        compute_signature,
        verify_signature,
    )

    body, now = b"{}", 1_700_000_000
    good = compute_signature("whsec_x", now, "evt_1", body)
    base = {EVENT_ID_HEADER: "evt_1", TIMESTAMP_HEADER: str(now)}
    assert verify_signature("whsec_x", {**base, SIGNATURE_HEADER: "v1=" + good}, body, now)
    for signature in ("v1=é" + good[1:], "v1=" + good[:-1], "v0=" + good, "v1=", "é"):
        headers = {**base, SIGNATURE_HEADER: signature}
        assert verify_signature("whsec_x", headers, body, now) is False
    odd_time = {**base, TIMESTAMP_HEADER: "²", SIGNATURE_HEADER: "v1=" + good}
    assert verify_signature("whsec_x", odd_time, body, now) is False


def test_portal_refuses_forged_cookies_and_csrf_without_500(service: RunningService) -> None:
    forged = {"Cookie": ("portal_session=key_x.9999999999.é" + "0" * 63).encode("latin-1")}
    with httpx.Client(base_url=service.base_url, timeout=10) as client:
        home = client.get("/portal", headers=forged)
        assert home.status_code < 500, home.text
        rotate = client.post("/portal/rotate", data={"csrf": "é"}, headers=forged)
        assert rotate.status_code < 500, rotate.text


def test_nul_characters_are_refused_at_the_edge(service: RunningService) -> None:
    with service.partner() as client:
        answers = [
            client.post("/domains/availability", json={"domains": ["a\x00b.com"]}),
            client.post(
                "/workspaces", json={"provider": "u", "name": "x\x00",
                                     "credentials": {"api_key": "key_good"}},
                headers={"Idempotency-Key": uuid.uuid4().hex},
            ),
            client.get("/domains", params={"status": "a\x00"}),
        ]
        for response in answers:
            assert response.status_code == 400, response.text
            assert response.json()["error"]["code"] == "invalid_request"
        # A literal backslash-u text is not a NUL and passes.
        fine = client.post("/domains/availability", json={"domains": ["a\\u0000b.com"]})
        assert fine.status_code == 200, fine.text
        assert client.get("/me").status_code == 200
