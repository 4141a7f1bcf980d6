"""The "audit" role: keeps the hash chain over the event log current."""

from __future__ import annotations

from typing import TYPE_CHECKING

from audit.chain import ChainFollower
from infra.blocking import run_blocking

if TYPE_CHECKING:
    from runtime.container import Container

SEAL_INTERVAL_SECONDS = 0.25


class AuditChainRole:
    name = "audit"

    def __init__(self, container: Container) -> None:
        self.follower = ChainFollower(
            container.store,
            container.ops_db.relaxed(),  # a lost seal is sealed again from the same events
            poll_interval=max(SEAL_INTERVAL_SECONDS, container.settings.poll_interval_seconds),
        )

    async def start(self) -> None:
        self.follower.start()

    async def stop(self) -> None:
        await run_blocking(self.follower.stop)

    def describe(self) -> str:
        return "hash chain over the event log (audit verify)"

