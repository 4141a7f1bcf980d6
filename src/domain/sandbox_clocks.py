"""The clock of one organization's sandbox (decisions.md 6): an offset from real time that
only moves forward, stored as events so that it survives restarts and replays.

`Advanced` moves the offset; `Settled` says an advance ran everything that came due on its way.
An advance whose offset is ahead of `settled_offset` is unfinished (its process died): the next
advance, or the sandbox-clock worker, runs what is left of it.
"""

from __future__ import annotations

import uuid
from typing import Any, ClassVar

from eventsourcing.domain import Aggregate, event

_CLOCK_NAMESPACE = uuid.UUID("5b0f7c1e-2a64-4d1a-9e37-8c0d6f2b9a41")
# Spec-sized bound of one advance: a leap year and a day (decisions.md 6).
MAX_ADVANCE_SECONDS = 31_622_400


def sandbox_clock_id(org_id: str) -> uuid.UUID:
    """One clock per organization sandbox, found without a lookup table."""
    return uuid.uuid5(_CLOCK_NAMESPACE, org_id)


class SandboxClock(Aggregate):
    # Its events, made by `@event` below: named here so that code using them is checked.
    Advanced: ClassVar[type[Aggregate.Event]]
    Settled: ClassVar[type[Aggregate.Event]]

    @staticmethod
    def create_id(*_: Any, org_id: str, **__: Any) -> uuid.UUID:
        return sandbox_clock_id(org_id)

    @event("Created")
    def __init__(self, *, org_id: str) -> None:
        self.org_id = org_id
        self.offset = 0.0
        self.settled_offset = 0.0

    @property
    def unsettled(self) -> bool:
        return self.settled_offset < self.offset

    @event("Advanced")
    def advance(self, seconds: float, real_at: float) -> None:
        self.offset += seconds

    @event("Settled")
    def settle(self, offset: float) -> None:
        self.settled_offset = max(self.settled_offset, offset)
