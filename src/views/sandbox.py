"""How the sandbox clock looks in responses (decisions.md 6): its now, how far it was moved,
and what an advance ran on the way."""

from __future__ import annotations

import msgspec


class CameDueOut(msgspec.Struct):
    """How many of each kind this advance ran."""

    grace_windows: int
    warm_periods: int
    renewals: int
    lapses: int
    webhook_attempts: int


class ClockOut(msgspec.Struct):
    now: str
    advanced_seconds: int


class AdvancedOut(ClockOut):
    came_due: CameDueOut


class ClockResponse(msgspec.Struct):
    data: ClockOut


class AdvancedResponse(msgspec.Struct):
    data: AdvancedOut
