"""The internal gRPC server: admin, audit and fulfillment services (partnerapi.v2, and the
deprecated partnerapi.v1 names through them), the standard health service (SERVING while
ready as `/readyz` is, NOT_SERVING otherwise) and server reflection, all on
`settings.grpc_port`.

With `grpc_tls_cert` and `grpc_tls_key` set it serves TLS; with `grpc_tls_client_ca` too the
handshake requires a client certificate that CA signed (mutual TLS), and such a caller needs no
operator token.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from gateway.grpc.admin import AdminServicer
from gateway.grpc.audit import AuditServicer
from gateway.grpc.deprecated_v1 import V1_SERVICE_NAMES, v1_handlers
from gateway.grpc.fulfillment import FulfillmentServicer
from gateway.grpc.health_service import HealthService
from gateway.grpc.interceptor import OperatorInterceptor
from gateway.grpc.reflection import enable_reflection
from infra.settings import Settings, host_port
from partnerapi.v2 import (
    admin_pb2,
    admin_pb2_grpc,
    audit_pb2,
    audit_pb2_grpc,
    fulfillment_pb2,
    fulfillment_pb2_grpc,
)
from services.operations.readiness import readiness
from views.readiness import Readiness

if TYPE_CHECKING:
    from runtime.container import Container

log = logging.getLogger(__name__)

HEALTH_EVERY_SECONDS = 2.0

V2_SERVICES = {
    "AdminService": admin_pb2.DESCRIPTOR.services_by_name["AdminService"],
    "AuditService": audit_pb2.DESCRIPTOR.services_by_name["AuditService"],
    "FulfillmentService": fulfillment_pb2.DESCRIPTOR.services_by_name["FulfillmentService"],
}
SERVICE_NAMES = (*(service.full_name for service in V2_SERVICES.values()), *V1_SERVICE_NAMES)


def server_credentials(settings: Settings) -> grpc.ServerCredentials | None:
    """TLS credentials from settings, or None for a plaintext port."""
    if not (settings.grpc_tls_cert or settings.grpc_tls_key or settings.grpc_tls_client_ca):
        return None
    if not (settings.grpc_tls_cert and settings.grpc_tls_key):
        raise RuntimeError("gRPC TLS needs both PARTNER_API_GRPC_TLS_CERT and _KEY")
    client_ca = settings.grpc_tls_client_ca
    return grpc.ssl_server_credentials(
        [(settings.grpc_tls_key.read_bytes(), settings.grpc_tls_cert.read_bytes())],
        root_certificates=client_ca.read_bytes() if client_ca else None,
        require_client_auth=client_ca is not None,
    )


class GrpcServer:
    def __init__(self, container: Container) -> None:
        self.container = container
        self.server: grpc.aio.Server | None = None
        self.health = HealthService()
        self.port = 0
        self._following: asyncio.Task[None] | None = None

    async def start(self) -> None:
        settings = self.container.settings
        if not settings.operator_token:
            raise RuntimeError("gRPC needs an operator token (PARTNER_API_OPERATOR_TOKEN)")
        credentials = server_credentials(settings)
        interceptor = OperatorInterceptor(
            settings.operator_token,
            trust_client_certificates=settings.grpc_tls_client_ca is not None,
        )
        server = grpc.aio.server(interceptors=[interceptor])
        self._add_services(server)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        enable_reflection((*SERVICE_NAMES, health.SERVICE_NAME), server)
        address = host_port(settings.host, settings.grpc_port)
        if credentials is None:
            self.port = server.add_insecure_port(address)
        else:
            self.port = server.add_secure_port(address, credentials)
        if not self.port:
            raise RuntimeError(f"gRPC could not listen on {address}")
        await server.start()
        self.server = server
        await self._set_health(health_pb2.HealthCheckResponse.SERVING)
        self._following = asyncio.create_task(self._follow_readiness(), name="grpc-health")

    async def _set_health(self, status: health_pb2.HealthCheckResponse.ServingStatus) -> None:
        for name in ("", *SERVICE_NAMES):
            await self.health.set(name, status)

    async def _follow_readiness(self) -> None:
        """The health service says what `/readyz` says: NOT_SERVING while the store cannot
        write, JetStream cannot store or the outbox is stuck."""
        serving = health_pb2.HealthCheckResponse.SERVING
        last = serving
        while True:
            await asyncio.sleep(HEALTH_EVERY_SECONDS)
            try:
                found = await readiness(self.container)
            except Exception:  # noqa: BLE001 - a failed check is itself not ready
                log.warning("readiness check failed", exc_info=True)
                found = Readiness(ready=False, checks={})
            ready, checks = found.ready, found.checks
            status = serving if ready else health_pb2.HealthCheckResponse.NOT_SERVING
            if status != last:
                log.warning("gRPC health %s: %s", "SERVING" if ready else "NOT_SERVING", checks)
                await self._set_health(status)
                last = status

    def _add_services(self, server: grpc.aio.Server) -> None:
        servicers = {
            "AdminService": AdminServicer(self.container),
            "AuditService": AuditServicer(self.container),
            "FulfillmentService": FulfillmentServicer(self.container),
        }
        admin_pb2_grpc.add_AdminServiceServicer_to_server(  # type: ignore[no-untyped-call]
            servicers["AdminService"], server
        )
        audit_pb2_grpc.add_AuditServiceServicer_to_server(  # type: ignore[no-untyped-call]
            servicers["AuditService"], server
        )
        fulfillment_pb2_grpc.add_FulfillmentServiceServicer_to_server(  # type: ignore[no-untyped-call]
            servicers["FulfillmentService"], server
        )
        server.add_generic_rpc_handlers(v1_handlers(servicers, V2_SERVICES))

    async def stop(self) -> None:
        if self.server is None:
            return
        if self._following is not None:
            self._following.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._following
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace=2.0)
        self.server = None
