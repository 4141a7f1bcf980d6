"""Server reflection: both `grpc.reflection.v1` and `grpc.reflection.v1alpha` list every
service and describe each (ours, health and reflection itself), and buf curl, which the
project installs, calls the server through it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import grpc
import pytest
from conftest import ServiceFactory
from google.protobuf import descriptor_pb2
from grpc_reflection.v1alpha import reflection_pb2
from grpc_support import grpc_service, target, with_channel

EXPECTED = {
    *(f"partnerapi.{v}.{s}" for v in ("v1", "v2") for s in ("AdminService", "AuditService", "FulfillmentService")),
    "grpc.health.v1.Health",
    "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection",
}
BUF = Path(__file__).parent.parent / "node_modules" / ".bin" / "buf"


def _described_services(answer: reflection_pb2.ServerReflectionResponse) -> set[str]:
    names = set()
    for raw in answer.file_descriptor_response.file_descriptor_proto:
        file = descriptor_pb2.FileDescriptorProto.FromString(raw)
        names |= {f"{file.package}.{service.name}" for service in file.service}
    return names


@pytest.mark.parametrize("version", ["v1", "v1alpha"])
def test_reflection_lists_and_describes_every_service(service_factory: ServiceFactory, version: str) -> None:
    service = grpc_service(service_factory)

    async def body(channel: grpc.aio.Channel) -> tuple[set[str], dict[str, set[str]]]:
        info = channel.stream_stream(
            f"/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo",
            request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
            response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
        )
        listing = [a async for a in info(iter([reflection_pb2.ServerReflectionRequest(list_services="")]))]
        listed = {s.name for s in listing[0].list_services_response.service}
        asks = [reflection_pb2.ServerReflectionRequest(file_containing_symbol=name) for name in sorted(listed)]
        answers = [a async for a in info(iter(asks))]
        return listed, {ask.file_containing_symbol: _described_services(a) for ask, a in zip(asks, answers, strict=True)}

    listed, described = with_channel(service, body)
    assert listed == EXPECTED
    for name in EXPECTED:
        assert name in described[name], f"{version} could not describe {name}"


def test_buf_curl_calls_through_reflection(service_factory: ServiceFactory) -> None:
    """The call docs/grpc.md shows, with the buf the Makefile installs (node_modules)."""
    assert BUF.exists(), "buf comes from package.json: `make install` installs it"
    service = grpc_service(service_factory)
    url = f"http://{target(service)}"
    token = service.container.settings.operator_token

    def buf_curl(*args: str) -> str:
        done = subprocess.run(
            [str(BUF), "curl", "--protocol", "grpc", "--http2-prior-knowledge", *args],
            capture_output=True, text=True, timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert set(buf_curl("--list-services", url).split()) == EXPECTED
    created = json.loads(buf_curl(
        "-H", f"authorization: Bearer {token}", "-d", '{"name": "Acme", "rate_burst": 9}',
        f"{url}/partnerapi.v2.AdminService/CreateOrganization",
    ))
    org = created["organization"]
    assert org["name"] == "Acme" and org["rateBurst"] == "9"
    assert service.container.accounts.organization(org["id"]).name == "Acme"
    deployment = json.loads(buf_curl(f"{url}/partnerapi.v2.AdminService/GetDeployment"))
    assert deployment == {"deploymentId": service.container.deployment_id}
