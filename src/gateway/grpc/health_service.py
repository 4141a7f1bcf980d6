"""The standard gRPC health service, whole: grpcio's servicer answers `Check` and `Watch` but
not `List`, which the published `grpc.health.v1` proto (and so server reflection) offers."""

from __future__ import annotations

from typing import Any

from grpc_health.v1 import health, health_pb2


class HealthService(health.aio.HealthServicer):  # type: ignore[misc]
    async def List(  # noqa: N802 - the proto's method name
        self, request: health_pb2.HealthListRequest, context: Any
    ) -> health_pb2.HealthListResponse:
        statuses = {
            name: health_pb2.HealthCheckResponse(status=status)
            for name, status in self._server_status.items()
        }
        return health_pb2.HealthListResponse(statuses=statuses)
