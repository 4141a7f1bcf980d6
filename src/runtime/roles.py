"""Background roles a process may run beside (or instead of) the REST gateway.

`runtime/bootstrap.py` lists every one; `partner-api serve --role NAME` picks them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from infra.blocking import run_blocking

if TYPE_CHECKING:
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
        await run_blocking(self.container.read_models.catch_up)
        self.container.read_models.start()

    async def stop(self) -> None:
        await run_blocking(self.container.read_models.stop)

    def describe(self) -> str:
        return "read models following the event log"


GATEWAY = "gateway"
NEEDS_NATS = {"publisher", "dispatcher"}
