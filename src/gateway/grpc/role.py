"""The "grpc" role: the internal gRPC server on `settings.grpc_port`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gateway.grpc.server import GrpcServer
from infra.settings import host_port

if TYPE_CHECKING:
    from runtime.container import Container


class GrpcRole:
    name = "grpc"

    def __init__(self, container: Container) -> None:
        self.container = container
        self.server = GrpcServer(container)

    async def start(self) -> None:
        await self.server.start()

    async def stop(self) -> None:
        await self.server.stop()

    def describe(self) -> str:
        where = host_port(self.container.settings.host, self.server.port)
        return f"grpc://{where} (admin, audit, fulfillment; health, reflection)"

