"""How far an organization's sandbox clock is ahead of real time, and running a worker's job
on its tenant's clock."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from eventsourcing.domain import Aggregate

from domain.sandbox_clocks import SandboxClock, sandbox_clock_id
from infra.ids import parse_id
from services.store import EventStore


def sandbox_offset(store: EventStore, org_id: str) -> float:
    clock = store.find(sandbox_clock_id(org_id), SandboxClock)
    return float(clock.offset) if isinstance(clock, SandboxClock) else 0.0


def on_its_clock(
    prefix: str, kind: type[Aggregate], move: Callable[[Any, str], object]
) -> Callable[[Any, str], object]:
    """A worker's `move(container, job_id)`, run on the clock of the job's sandbox (decisions.md
    6) or on real time for a live job: what it writes carries the time its tenant sees."""

    def run(container: Any, job_id: str) -> object:
        found = container.store.find(parse_id(prefix, job_id), kind)
        if found is None:
            return move(container, job_id)
        with container.clock.scoped(found.org_id, found.environment):
            return move(container, job_id)

    return run
