"""How far an organization's sandbox clock is ahead of real time."""

from __future__ import annotations

from domain.sandbox_clocks import SandboxClock, sandbox_clock_id
from services.store import EventStore


def sandbox_offset(store: EventStore, org_id: str) -> float:
    clock = store.find(sandbox_clock_id(org_id), SandboxClock)
    return float(clock.offset) if isinstance(clock, SandboxClock) else 0.0
