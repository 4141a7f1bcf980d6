"""How far an organization's sandbox clock is ahead of real time, and running a worker's job
on its tenant's clock."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from eventsourcing.domain import Aggregate

from domain.sandbox_clocks import SandboxClock, sandbox_clock_id
from infra.ids import parse_id
from infra.store import EventStore

if TYPE_CHECKING:
    from runtime.container import Container


class SandboxOffsets:
    """`sandbox_offset`, remembered per organization: a clock moves only when its partner
    advances it, and asking whether it did (`has_newer_events`, one indexed read) costs far
    less than loading it on every request that reads the time."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self._known: dict[str, tuple[float, int]] = {}

    def __call__(self, org_id: str, latest_version: int | None = None) -> float:
        """The offset of `org_id`'s sandbox clock. `latest_version`: the clock's version as a
        read made for this request or job found it (0: never advanced), which saves asking
        again; None: ask."""
        clock_id = sandbox_clock_id(org_id)
        known = self._known.get(org_id)
        if known is not None:
            if latest_version is None:
                unchanged = not self.store.has_newer_events(clock_id, known[1])
            else:
                unchanged = latest_version == known[1]
            if unchanged:
                return known[0]
        if latest_version == 0:
            self._known[org_id] = (0.0, 0)
            return 0.0
        clock = self.store.find(clock_id, SandboxClock)
        found = (float(clock.offset), int(clock.version)) if clock is not None else (0.0, 0)
        self._known[org_id] = found
        return found[0]


def on_its_clock(
    prefix: str, kind: type[Aggregate], move: Callable[[Any, str], object]
) -> Callable[[Any, str], object]:
    """A worker's `move(container, job_id)`, run on the clock of the job's sandbox (decisions.md
    6) or on real time for a live job: what it writes carries the time its tenant sees."""

    def run(container: Container, job_id: str) -> object:
        found = container.store.find(parse_id(prefix, job_id), kind)
        if found is None:
            return move(container, job_id)
        with container.clock.scoped(found.org_id, found.environment):
            return move(container, job_id)

    return run
