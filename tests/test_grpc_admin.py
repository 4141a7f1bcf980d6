"""AdminService over a real grpc.aio client, plus the health, reflection and auth every
internal service shares, and the CLI going through the running server."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import httpx
import pytest
from conftest import ServiceFactory, free_port
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_support import auth, grpc_service, trailer, with_channel

from partnerapi.v1 import admin_pb2, admin_pb2_grpc


def test_health_serving_and_reflection_lists_services(service_factory: ServiceFactory) -> None:
    service = grpc_service(service_factory)

    async def body(channel: grpc.aio.Channel) -> tuple[object, list[str]]:
        health = health_pb2_grpc.HealthStub(channel)
        overall = await health.Check(health_pb2.HealthCheckRequest())
        admin = await health.Check(health_pb2.HealthCheckRequest(service="partnerapi.v1.AdminService"))
        assert overall.status == admin.status == health_pb2.HealthCheckResponse.SERVING
        listed = (await health.List(health_pb2.HealthListRequest())).statuses
        assert listed[""].status == listed["partnerapi.v1.AdminService"].status == admin.status
        assert "partnerapi.v2.AuditService" in listed
        stream = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(list_services="")])
        )
        names: list[str] = []
        async for answer in stream:
            names += [s.name for s in answer.list_services_response.service]
        return overall, names

    _, names = with_channel(service, body)
    expected = {"AdminService", "AuditService", "FulfillmentService"}
    assert {f"partnerapi.v1.{name}" for name in expected} | {"grpc.health.v1.Health"} <= set(names)


def test_reflection_answers_under_the_v1_name_too(service_factory: ServiceFactory) -> None:
    """Newer clients (grpcurl, grpc_cli) ask `grpc.reflection.v1` first."""
    service = grpc_service(service_factory)

    async def body(channel: grpc.aio.Channel) -> list[str]:
        info = channel.stream_stream(
            "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
            request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
            response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
        )
        names: list[str] = []
        symbol = "partnerapi.v1.AdminService"
        requests = [
            reflection_pb2.ServerReflectionRequest(list_services=""),
            reflection_pb2.ServerReflectionRequest(file_containing_symbol=symbol),
        ]
        answers = [answer async for answer in info(iter(requests))]
        names += [s.name for s in answers[0].list_services_response.service]
        assert answers[1].file_descriptor_response.file_descriptor_proto
        return names

    assert "partnerapi.v1.AdminService" in with_channel(service, body)


@pytest.mark.parametrize("metadata", [(), (("authorization", "Bearer op_wrong"),)])
def test_calls_without_the_operator_token_are_refused(
    service_factory: ServiceFactory, metadata: tuple[tuple[str, str], ...]
) -> None:
    service = grpc_service(service_factory)

    async def body(channel: grpc.aio.Channel) -> grpc.aio.AioRpcError:
        stub = admin_pb2_grpc.AdminServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.CreateOrganization(admin_pb2.CreateOrganizationRequest(name="X"), metadata=metadata)
        return refused.value

    error = with_channel(service, body)
    assert error.code() == grpc.StatusCode.UNAUTHENTICATED
    assert trailer(error, "error-code") == "unauthorized"
    assert service.container.store.recorder.max_notification_id() in (None, 0)


def test_admin_service_runs_every_account_operation(service_factory: ServiceFactory) -> None:
    service = grpc_service(service_factory, allow_http_webhooks=True)
    md = auth(service)

    async def body(channel: grpc.aio.Channel) -> dict[str, object]:
        stub = admin_pb2_grpc.AdminServiceStub(channel)
        org = await stub.CreateOrganization(
            admin_pb2.CreateOrganizationRequest(name="Acme", rate_rps=5), metadata=md
        )
        fetched = await stub.GetOrganization(admin_pb2.GetOrganizationRequest(org_id=org.id), metadata=md)
        limited = await stub.SetRateLimit(
            admin_pb2.SetRateLimitRequest(org_id=org.id, rate_rps=2.5, rate_burst=7), metadata=md
        )
        key = await stub.CreateApiKey(
            admin_pb2.CreateApiKeyRequest(org_id=org.id, environment="test", preset="full"), metadata=md
        )
        rotated = await stub.RotateApiKey(admin_pb2.RotateApiKeyRequest(key_id=key.id), metadata=md)
        revoked = await stub.RevokeApiKey(admin_pb2.RevokeApiKeyRequest(key_id=key.id), metadata=md)
        keys = await stub.ListApiKeys(admin_pb2.ListApiKeysRequest(org_id=org.id), metadata=md)
        balance = await stub.CreditWallet(
            admin_pb2.CreditWalletRequest(org_id=org.id, amount_cents=1500), metadata=md
        )
        balance = await stub.CreditWallet(
            admin_pb2.CreditWalletRequest(org_id=org.id, amount_cents=500), metadata=md
        )
        hook = await stub.SetWebhookEndpoint(
            admin_pb2.SetWebhookEndpointRequest(org_id=org.id, url="http://127.0.0.1:9/hook"), metadata=md
        )
        return locals()

    got = with_channel(service, body)
    org, fetched, limited = got["org"], got["fetched"], got["limited"]
    assert org.id.startswith("org_") and org.name == "Acme" and org.rate_rps == 5  # type: ignore[attr-defined]
    assert not org.HasField("rate_burst")  # type: ignore[attr-defined]
    assert fetched == org
    assert (limited.rate_rps, limited.rate_burst) == (2.5, 7)  # type: ignore[attr-defined]
    key, rotated = got["key"], got["rotated"]
    assert key.secret.startswith("pk_test_") and key.environment == "test"  # type: ignore[attr-defined]
    assert rotated.replaces == key.id and rotated.preset == "full" and rotated.id != key.id  # type: ignore[attr-defined]
    assert got["revoked"] == admin_pb2.RevokedApiKey(id=key.id, revoked=True)  # type: ignore[attr-defined]
    listed = {k.id: k for k in got["keys"].keys}  # type: ignore[attr-defined]
    assert listed[key.id].HasField("revoked_at") and not listed[rotated.id].HasField("revoked_at")  # type: ignore[attr-defined]
    assert got["balance"].balance_cents == 2000  # type: ignore[attr-defined]
    assert got["hook"].url == "http://127.0.0.1:9/hook" and got["hook"].secret.startswith("whsec_")  # type: ignore[attr-defined]
    # What gRPC did is what partners see over REST: the revoked key fails, the rotated one works.
    me = service.client(rotated.secret).get("/me")  # type: ignore[attr-defined]
    assert me.status_code == 200 and me.json()["data"]["partner"]["id"] == org.id  # type: ignore[attr-defined]
    assert service.client(key.secret).get("/me").status_code == 401  # type: ignore[attr-defined]


def test_domain_errors_carry_status_and_stable_code(service_factory: ServiceFactory) -> None:
    service = grpc_service(service_factory)
    md = auth(service)

    async def body(channel: grpc.aio.Channel) -> list[grpc.aio.AioRpcError]:
        stub = admin_pb2_grpc.AdminServiceStub(channel)
        errors = []
        for call in (
            stub.GetOrganization(admin_pb2.GetOrganizationRequest(org_id="org_nope"), metadata=md),
            stub.CreateOrganization(admin_pb2.CreateOrganizationRequest(name="  "), metadata=md),
            stub.CreateApiKey(admin_pb2.CreateApiKeyRequest(org_id="org_x", environment="prod", preset="full"), metadata=md),
            stub.CreditWallet(admin_pb2.CreditWalletRequest(org_id="org_nope", amount_cents=5), metadata=md),
            stub.CreditWallet(admin_pb2.CreditWalletRequest(org_id="org_x", amount_cents=0), metadata=md),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as failed:
                await call
            errors.append(failed.value)
        return errors

    missing, empty, bad_env, no_wallet, no_amount = with_channel(service, body)
    assert trailer(no_amount, "error-field") == "amount_cents"  # the proto's field name
    assert missing.code() == grpc.StatusCode.NOT_FOUND
    assert trailer(missing, "error-code") == "not_found" and missing.details().startswith("not_found:")
    assert empty.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert trailer(empty, "error-code") == "invalid_request" and trailer(empty, "error-field") == "name"
    assert bad_env.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert trailer(bad_env, "error-field") == "environment"  # the proto's field name
    assert no_wallet.code() == grpc.StatusCode.NOT_FOUND  # as GetOrganization for the same id


def test_organization_names_and_rate_limits_are_bounded(service_factory: ServiceFactory) -> None:
    """An operator's typo must not store a name no page shows or a burst the bucket's
    counters cannot hold (it answered internal_error, and RateLimit-Remaining beyond Limit)."""
    service = grpc_service(service_factory)
    md = auth(service)
    bad = (
        (admin_pb2.CreateOrganizationRequest(name="x" * 201), "name"),
        (admin_pb2.CreateOrganizationRequest(name="Acme\x00"), "name"),
        (admin_pb2.CreateOrganizationRequest(name="Acme", rate_rps=1e300), "rate_rps"),
        (admin_pb2.CreateOrganizationRequest(name="Acme", rate_burst=2**63 - 1), "rate_burst"),
    )

    async def body(channel: grpc.aio.Channel) -> list[grpc.aio.AioRpcError]:
        stub = admin_pb2_grpc.AdminServiceStub(channel)
        errors = []
        for request, _ in bad:
            with pytest.raises(grpc.aio.AioRpcError) as failed:
                await stub.CreateOrganization(request, metadata=md)
            errors.append(failed.value)
        return errors

    for error, (_, field) in zip(with_channel(service, body), bad, strict=True):
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, field
        assert trailer(error, "error-field") == field
    made = service.container.accounts.create_organization("A" * 200, 1_000_000.0, 1_000_000_000)
    assert made["rate_burst"] == 1_000_000_000


def test_a_revoked_key_cannot_be_rotated(service_factory: ServiceFactory) -> None:
    service = grpc_service(service_factory)
    issued = service.container.accounts.create_key(service.new_org(), "test", "full")
    service.container.accounts.revoke_key(issued.id)

    async def body(channel: grpc.aio.Channel) -> grpc.aio.AioRpcError:
        stub = admin_pb2_grpc.AdminServiceStub(channel)
        request = admin_pb2.RotateApiKeyRequest(key_id=issued.id)
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            await stub.RotateApiKey(request, metadata=auth(service))
        return failed.value

    refused = with_channel(service, body)
    assert refused.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert trailer(refused, "error-code") == "conflict"


CLI = [sys.executable, "-m", "cli.main"]


def test_cli_goes_through_the_running_server(service_factory: ServiceFactory, tmp_path: Path) -> None:
    service = grpc_service(service_factory)
    settings = service.container.settings
    # An empty data dir of its own: the org can only reach the server's store through gRPC.
    env = {
        **os.environ,
        "PARTNER_API_DATA_DIR": str(tmp_path / "elsewhere"),
        "PARTNER_API_DATABASE_URL": "",
        "PARTNER_API_GRPC_PORT": str(settings.grpc_port),
        "PARTNER_API_OPERATOR_TOKEN": settings.operator_token,
    }

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=60)

    done = cli("org", "create", "Remote", "--rate-burst", "9")
    assert done.returncode == 0, done.stderr
    org = json.loads(done.stdout)
    assert org["name"] == "Remote" and org["rate_burst"] == 9 and org["rate_rps"] is None
    assert done.stderr == f"partner-api: acted on server 127.0.0.1:{settings.grpc_port} (gRPC admin)\n"
    assert service.container.accounts.organization(org["id"]).name == "Remote"
    made = cli("key", "create", org["id"], "--env", "live", "--preset", "read")
    assert made.returncode == 0, made.stderr
    key = json.loads(made.stdout)
    assert key["secret"].startswith("pk_live_") and key["org_id"] == org["id"]
    assert httpx.get(f"{service.api}/me", headers={"Authorization": f"Bearer {key['secret']}"}).status_code == 200
    assert json.loads(cli("wallet", "credit", org["id"], "250").stdout) == {
        "org_id": org["id"],
        "balance_cents": 250,
    }
    too_much = cli("wallet", "credit", org["id"], "9" * 23)  # past int64 on the wire
    assert too_much.returncode == 2 and too_much.stdout == ""
    assert "must be 1 to 1000000000000" in too_much.stderr and "internal" not in too_much.stderr
    assert json.loads(cli("key", "revoke", key["id"]).stdout) == {"id": key["id"], "revoked": True}
    failed = cli("key", "revoke", "key_nope")
    assert failed.returncode == 1 and failed.stdout == ""
    assert failed.stderr.strip().startswith("partner-api: not_found")


def test_cli_writes_the_store_itself_only_when_no_server_listens(tmp_path: Path) -> None:
    """The CLI falls back to the store only when no gRPC server takes the call. A server that
    took the call and then went away may have run it: writing the store as well could credit
    a wallet twice, so the CLI reports the failure and writes nothing."""
    env = {
        **os.environ,
        "PARTNER_API_DATA_DIR": str(tmp_path / "var"),
        "PARTNER_API_DATABASE_URL": "",
        "PARTNER_API_OPERATOR_TOKEN": "op-token",
    }

    def cli(port: int, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*CLI, *args], env={**env, "PARTNER_API_GRPC_PORT": str(port)},
                              capture_output=True, text=True, timeout=60)

    def vanish(request: bytes, context: grpc.ServicerContext) -> bytes:
        context.abort(grpc.StatusCode.UNAVAILABLE, "Socket closed")  # as a killed server

    server = grpc.server(ThreadPoolExecutor(2))
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(
        "partnerapi.v2.AdminService", {"CreditWallet": grpc.unary_unary_rpc_method_handler(vanish)},
    )])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        org = json.loads(cli(free_port(), "org", "create", "Local").stdout)  # nothing listens
        lost = cli(port, "wallet", "credit", org["id"], "250")
        assert lost.returncode == 1 and lost.stdout == ""
        assert "may have run" in lost.stderr
        with socket.socket() as not_grpc:  # a listener that is no gRPC server: nothing ran
            not_grpc.bind(("127.0.0.1", 0))
            not_grpc.listen()
            done = cli(not_grpc.getsockname()[1], "wallet", "credit", org["id"], "100")
    finally:
        server.stop(0)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["balance_cents"] == 100  # the lost call wrote nothing
