"""Mutual TLS for internal callers, with certificates made here and a real grpc.aio client: a
certificate from the configured client CA is enough (no operator token), a caller without one
(or with one from another CA) is refused in the handshake; TLS without a client CA still asks
for the operator token."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
from pathlib import Path
from typing import Any

import grpc
import pytest
from conftest import RunningService, ServiceFactory
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_support import auth, grpc_service, target

from partnerapi.v1 import fulfillment_pb2 as pb
from partnerapi.v1 import fulfillment_pb2_grpc

Pem = tuple[bytes, bytes]  # (certificate, private key)


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _issue(
    subject: str, issuer: tuple[x509.Name, Any] | None, *, ca: bool = False, server: bool = False
) -> tuple[x509.Certificate, Any]:
    key = ec.generate_private_key(ec.SECP256R1())
    issuer_name, issuer_key = issuer or (_name(subject), key)
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if server:
        names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        builder = builder.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
    elif not ca:
        builder = builder.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256()), key


def _pem(cert: x509.Certificate, key: Any) -> Pem:
    return (
        cert.public_bytes(serialization.Encoding.PEM),
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )


class Certificates:
    """A CA with a server and a client certificate, and a client certificate from another CA."""

    def __init__(self, folder: Path) -> None:
        ca_cert, ca_key = _issue("Test internal CA", None, ca=True)
        self.ca = _pem(ca_cert, ca_key)[0]
        self.server = _pem(*_issue("localhost", (ca_cert.subject, ca_key), server=True))
        self.client = _pem(*_issue("ops-robot", (ca_cert.subject, ca_key)))
        other_cert, other_key = _issue("Someone else's CA", None, ca=True)
        self.stranger = _pem(*_issue("stranger", (other_cert.subject, other_key)))
        self.files = {}
        for name, data in {"ca.pem": self.ca, "server.pem": self.server[0], "server.key": self.server[1]}.items():
            path = folder / name
            path.write_bytes(data)
            self.files[name] = path

    def settings(self, client_ca: bool = True) -> dict[str, Any]:
        return {
            "grpc_tls_cert": self.files["server.pem"],
            "grpc_tls_key": self.files["server.key"],
            "grpc_tls_client_ca": self.files["ca.pem"] if client_ca else None,
        }


def list_work(service: RunningService, certs: Certificates, client: Pem | None, metadata: Any = ()) -> Any:
    credentials = grpc.ssl_channel_credentials(
        root_certificates=certs.ca,
        private_key=client[1] if client else None,
        certificate_chain=client[0] if client else None,
    )

    async def run() -> Any:
        async with grpc.aio.secure_channel(target(service), credentials) as channel:
            stub = fulfillment_pb2_grpc.FulfillmentServiceStub(channel)  # type: ignore[no-untyped-call]
            try:
                return await stub.ListWork(pb.ListWorkRequest(), metadata=metadata, timeout=15)
            except grpc.aio.AioRpcError as error:
                return error.code()

    return asyncio.run(run())


def test_client_certificate_from_the_ca_is_accepted_others_refused(
    service_factory: ServiceFactory, tmp_path: Path
) -> None:
    certs = Certificates(tmp_path)
    service = grpc_service(service_factory, **certs.settings())

    accepted = list_work(service, certs, certs.client)
    assert isinstance(accepted, pb.ListWorkResponse) and accepted.stuck_after_seconds > 0
    assert list_work(service, certs, None, auth(service)) == grpc.StatusCode.UNAVAILABLE
    assert list_work(service, certs, certs.stranger, auth(service)) == grpc.StatusCode.UNAVAILABLE

    async def plaintext() -> grpc.StatusCode:
        async with grpc.aio.insecure_channel(target(service)) as channel:
            stub = fulfillment_pb2_grpc.FulfillmentServiceStub(channel)  # type: ignore[no-untyped-call]
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await stub.ListWork(pb.ListWorkRequest(), metadata=auth(service), timeout=15)
            return refused.value.code()

    assert asyncio.run(plaintext()) == grpc.StatusCode.UNAVAILABLE


def test_certificate_name_is_the_operator_of_a_report(service_factory: ServiceFactory, tmp_path: Path) -> None:
    certs = Certificates(tmp_path)
    service = grpc_service(service_factory, **certs.settings())
    with service.partner() as client:
        response = client.post(
            "/workspaces",
            json={"name": "W", "provider": "u", "credentials": {"api_key": "key_good"}},
            headers={"Idempotency-Key": "w-1"},
        )
        workspace = response.json()["data"]["workspace_id"]
        body = {"destination": {"workspace_id": workspace}, "suite_a": {"domains": 1, "inboxes_per_domain": 1}}
        order = client.post("/orders", json=body, headers={"Idempotency-Key": "o-1"}).json()["data"]
    credentials = grpc.ssl_channel_credentials(certs.ca, certs.client[1], certs.client[0])

    async def run() -> Any:
        async with grpc.aio.secure_channel(target(service), credentials) as channel:
            stub = fulfillment_pb2_grpc.FulfillmentServiceStub(channel)  # type: ignore[no-untyped-call]
            request = pb.ReportStepRequest(order_id=order["id"], step="register", outcome=pb.STEP_OUTCOME_DONE)
            return await stub.ReportStep(request, timeout=15)

    reported = asyncio.run(run())
    assert reported.operator == "ops-robot" and not reported.applied  # sandbox: already done


def test_tls_without_client_ca_still_needs_the_token(service_factory: ServiceFactory, tmp_path: Path) -> None:
    certs = Certificates(tmp_path)
    service = grpc_service(service_factory, **certs.settings(client_ca=False))

    assert list_work(service, certs, None) == grpc.StatusCode.UNAUTHENTICATED
    assert isinstance(list_work(service, certs, None, auth(service)), pb.ListWorkResponse)

    async def health() -> Any:
        credentials = grpc.ssl_channel_credentials(root_certificates=certs.ca)
        async with grpc.aio.secure_channel(target(service), credentials) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            return await stub.Check(health_pb2.HealthCheckRequest(), timeout=15)

    assert asyncio.run(health()).status == health_pb2.HealthCheckResponse.SERVING
