"""Background roles a process may run beside (or instead of) the REST gateway.

Each capability registers its role here; `partner-api serve --role NAME` picks them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import anyio

from runtime.container import Container


class Role(Protocol):
    name: str

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def describe(self) -> str:
        """Where it listens or what it follows, printed at start."""
        ...


class ProjectionsRole:
    name = "projections"

    def __init__(self, container: Container) -> None:
        self.container = container

    async def start(self) -> None:
        await anyio.to_thread.run_sync(self.container.read_models.catch_up)
        self.container.read_models.start()

    async def stop(self) -> None:
        await anyio.to_thread.run_sync(self.container.read_models.stop)

    def describe(self) -> str:
        return "read models following the event log"


RoleFactory = Callable[[Container], Role]

ROLE_FACTORIES: dict[str, RoleFactory] = {"projections": ProjectionsRole}
GATEWAY = "gateway"
NEEDS_NATS = {"publisher", "dispatcher"}


def all_roles() -> list[str]:
    return [GATEWAY, *ROLE_FACTORIES]


def register_role(name: str, factory: RoleFactory) -> None:
    ROLE_FACTORIES[name] = factory
