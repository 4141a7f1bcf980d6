"""Helpers shared by the gRPC tests: a service with the grpc role on a free port, and an
asyncio runner for the grpc.aio client."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import grpc
from conftest import RunningService, ServiceFactory, free_port

T = TypeVar("T")
ROLES = ["gateway", "projections", "grpc", "audit"]


def grpc_service(service_factory: ServiceFactory, **overrides: Any) -> RunningService:
    return service_factory(grpc_port=free_port(), roles=overrides.pop("roles", ROLES), **overrides)


def target(service: RunningService) -> str:
    return f"127.0.0.1:{service.container.settings.grpc_port}"


def auth(service: RunningService) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {service.container.settings.operator_token}"),)


def with_channel(service: RunningService, body: Callable[[grpc.aio.Channel], Awaitable[T]]) -> T:
    async def run() -> T:
        async with grpc.aio.insecure_channel(target(service)) as channel:
            return await body(channel)

    return asyncio.run(run())


def trailer(error: grpc.aio.AioRpcError, key: str) -> str | None:
    for item in error.trailing_metadata() or ():
        if item[0] == key:
            return str(item[1])
    return None
