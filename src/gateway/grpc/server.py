"""The internal gRPC server: admin and audit services, the standard
health service (SERVING once started) and server reflection, all on `settings.grpc_port`."""

from __future__ import annotations

import logging

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from gateway.grpc.admin import AdminServicer
from gateway.grpc.audit import AuditServicer
from gateway.grpc.interceptor import OperatorInterceptor
from partnerapi.v1 import admin_pb2, admin_pb2_grpc, audit_pb2, audit_pb2_grpc
from runtime.container import Container

log = logging.getLogger(__name__)

SERVICE_NAMES = (
    admin_pb2.DESCRIPTOR.services_by_name["AdminService"].full_name,
    audit_pb2.DESCRIPTOR.services_by_name["AuditService"].full_name,
)


class GrpcServer:
    def __init__(self, container: Container) -> None:
        self.container = container
        self.server: grpc.aio.Server | None = None
        self.health = health.aio.HealthServicer()
        self.port = 0

    async def start(self) -> None:
        settings = self.container.settings
        if not settings.operator_token:
            raise RuntimeError("gRPC needs an operator token (PARTNER_API_OPERATOR_TOKEN)")
        server = grpc.aio.server(interceptors=[OperatorInterceptor(settings.operator_token)])
        admin_pb2_grpc.add_AdminServiceServicer_to_server(  # type: ignore[no-untyped-call]
            AdminServicer(self.container), server
        )
        audit_pb2_grpc.add_AuditServiceServicer_to_server(  # type: ignore[no-untyped-call]
            AuditServicer(self.container), server
        )
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        reflection.enable_server_reflection(
            (*SERVICE_NAMES, health.SERVICE_NAME, reflection.SERVICE_NAME), server
        )
        self.port = server.add_insecure_port(f"{settings.host}:{settings.grpc_port}")
        if not self.port:
            raise RuntimeError(f"gRPC could not listen on {settings.host}:{settings.grpc_port}")
        await server.start()
        self.server = server
        for name in ("", *SERVICE_NAMES):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)

    async def stop(self) -> None:
        if self.server is None:
            return
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace=2.0)
        self.server = None
