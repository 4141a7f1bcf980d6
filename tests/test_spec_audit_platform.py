"""Audit of spec 5, 7, 8 and decisions.md 1, 2, 4: the letter of the texts, seen from outside."""

from __future__ import annotations

import asyncio
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import RunningService, free_port

from domain.errors import DomainError
from gateway.rest.health import nats_reachable

CLI = [sys.executable, "-m", "cli.main"]
WORKSPACE = {"name": "Acme outbound", "provider": "u", "credentials": {"api_key": "ws_key_1"}}


def run_cli(tmp_path: Path, *args: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PARTNER_API_DATA_DIR": str(tmp_path / "var"),
        # Nothing listens there: the CLI uses the store, never another test's server.
        "PARTNER_API_GRPC_PORT": str(free_port()),
        **extra_env,
    }
    return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=60)


def assert_one_line_failure(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode != 0
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def error_of(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == code
    assert error["request_id"] == response.headers["Service-Request-Id"]
    return error


def test_missing_idempotency_key_wins_over_a_bad_body(service: RunningService) -> None:
    """Spec 8: a missing `Idempotency-Key` gives `idempotency_key_required`, body or not."""
    with service.partner() as client:
        error_of(client.post("/orders", json={}), 400, "idempotency_key_required")
        error_of(client.post("/workspaces", json={"nme": 1}), 400, "idempotency_key_required")
        error_of(client.post("/workspaces", json=WORKSPACE), 400, "idempotency_key_required")
    with service.partner(env="live") as live:
        error_of(live.post("/domains/purchase", json={}), 400, "idempotency_key_required")
    with service.partner(preset="read") as read:
        # The preset is checked first: a read key never learns about idempotency.
        error_of(read.post("/orders", json={}), 403, "forbidden")


def test_bodiless_posts_reject_unknown_properties(service: RunningService) -> None:
    """decisions.md 4: an unknown JSON property is `invalid_request` with `field`, on every body."""
    with service.partner() as client:
        for path in (
            "/orders/ord_nope/cancel",
            "/bundles/bun_nope/archive",
            "/events/evt_nope/redeliver",
            "/webhook_endpoint/rotate_secret",
            "/webhook_endpoint/test",
        ):
            caller = service.live_twin(client) if path.endswith("rotate_secret") else client
            error = error_of(caller.post(path, json={"zz": 1}), 400, "invalid_request")
            assert error["field"] == "zz", path
        # No body, or an empty object, is still no input at all.
        error_of(client.post("/orders/ord_nope/cancel"), 404, "not_found")
        error_of(client.post("/orders/ord_nope/cancel", json={}), 404, "not_found")
        error_of(client.post("/orders/ord_nope/cancel", json=None, content=b"null",
                             headers={"Content-Type": "application/json"}), 404, "not_found")


def test_every_route_refuses_nul_characters(service: RunningService) -> None:
    """A handler's own before_request hook replaces the router's: each must still apply the
    rules of every request (a NUL in a path reached PostgreSQL as a 500)."""
    with service.client() as client:
        document = client.get("/schema/openapi.json").json()
    with service.partner() as client:
        for path, item in document["paths"].items():
            if "{" not in path:
                continue
            target = re.sub(r"\{[^}]+\}", "x%00y", path).removeprefix("/partner/v1")
            first = re.search(r"\{([^}:]+)", path)
            for method in item:
                response = client.request(method.upper(), target, json={})
                error = error_of(response, 400, "invalid_request")
                # The parameter holding it is named, as any other bad path parameter is.
                assert first is not None and error.get("field") == first.group(1), (path, error)


def test_openapi_documents_the_limits(service: RunningService) -> None:
    with service.client() as client:
        document = client.get("/schema/openapi.json").json()
    schemas = document["components"]["schemas"]
    for path, item in document["paths"].items():
        for method, operation in item.items():
            responses = operation["responses"]
            assert "500" in responses, (method, path)
            retry_after = responses["429"]["headers"]["Retry-After"]["schema"]
            assert retry_after == {"type": "integer", "minimum": 1}
            assert {"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} <= set(
                responses["429"]["headers"]
            )
            for parameter in operation.get("parameters", []):
                if parameter["name"] == "per_page":
                    schema = parameter["schema"]
                    assert schema["default"] == 25
                    (integer,) = [
                        b for b in schema.get("oneOf", [schema]) if b["type"] == "integer"
                    ]
                    assert (integer["minimum"], integer["maximum"]) == (1, 100)
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if body:
                schema = body["schema"]
                # An optional body (resolve: none at all is `{}`) is `oneOf` the body and null.
                schema = next((s for s in schema.get("oneOf", []) if "$ref" in s), schema)
                named = schemas.get(schema.get("$ref", "").rsplit("/", 1)[-1], schema)
                assert named.get("additionalProperties") is False, (method, path)
    remove = document["paths"]["/partner/v1/pool/remove"]["post"]["requestBody"]
    ref = remove["content"]["application/json"]["schema"]["$ref"]
    assert ref == "#/components/schemas/RemovePoolDomainsRequest"
    domains = schemas["RemovePoolDomainsRequest"]["properties"]["domains"]
    assert (domains["minItems"], domains["maxItems"], domains["uniqueItems"]) == (1, 25, True)
    removed = document["paths"]["/partner/v1/pool/remove"]["post"]["responses"]["200"]
    envelope = schemas[removed["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]]
    result = schemas[envelope["properties"]["data"]["$ref"].rsplit("/", 1)[-1]]
    assert set(result["required"]) == {"removed", "absent", "inbox_count", "domains"}
    outcome = schemas[result["properties"]["domains"]["items"]["$ref"].rsplit("/", 1)[-1]]
    assert outcome["properties"]["outcome"]["enum"] == ["removed", "absent"]
    row = schemas["AvailabilityRow"]
    spec_row = {"domain", "available", "price_cents", "renewal_price_cents", "currency"}
    assert spec_row | {"usable_for"} <= set(row["required"])
    assert "reason" in row["properties"] and "reason" not in row["required"]


@pytest.mark.parametrize("rate", [math.nan, math.inf, 0.0])
def test_rate_must_be_a_positive_number(service: RunningService, rate: float) -> None:
    """A NaN allowance answered 500 on every request of the organization."""
    with pytest.raises(DomainError) as raised:
        service.container.accounts.create_organization("Acme", rate_rps=rate)
    assert raised.value.code == "invalid_request"


def test_cli_usage_errors_are_one_line(tmp_path: Path) -> None:
    """decisions.md 2: every command exits non-zero with a one-line error on stderr."""
    for args in (
        ("key", "create", "org_x", "--env", "prod", "--preset", "full"),
        ("wallet", "credit", "org_x", "abc"),
        ("key",),
        (),
        ("org", "create", "Acme", "--rate-rps", "nan"),
    ):
        assert_one_line_failure(run_cli(tmp_path, *args))


def test_cli_unexpected_failure_is_one_line(tmp_path: Path) -> None:
    done = run_cli(
        tmp_path, "org", "create", "Acme", PARTNER_API_DATABASE_URL="postgresql://u@127.0.0.1:1/x"
    )
    assert_one_line_failure(done)


def test_readiness_checks_that_nats_answers() -> None:
    """decisions.md 1: /readyz checks that NATS is reachable (it said "not configured")."""

    async def scenario() -> tuple[str, str]:
        async def greet(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(b'INFO {"server_id":"x"}\r\n')
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(greet, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server:
            up = await nats_reachable(f"nats://127.0.0.1:{free_port()},nats://127.0.0.1:{port}")
        down = await nats_reachable(f"nats://127.0.0.1:{free_port()}", timeout=1.0)
        return up, down

    up, down = asyncio.run(scenario())
    assert up == "ok"
    assert down.startswith("error")


def test_readiness_reports_a_malformed_nats_url_instead_of_raising() -> None:
    import asyncio

    from gateway.rest.health import nats_reachable

    for url in ("nats://[::1", "nats://127.0.0.1:99999"):
        assert asyncio.run(nats_reachable(url, timeout=0.5)) == "error: ValueError", url
