"""The one injectable clock: grace windows and retry schedules read time only from here.

`container.clock` is a `TenantClock`: real time, except while code runs for one organization's
sandbox (a request with a sandbox key, a worker's job on a sandbox resource), when it reads that
sandbox's own clock (decisions.md 6), which its partner can move forward.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

SANDBOX = "test"


class Clock(Protocol):
    def now(self) -> float:
        """Unix seconds."""
        ...


class SystemClock:
    def now(self) -> float:
        return time.time()


class ManualClock:
    """A clock tests move by hand, so time-based rules run without sleeping."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self._now = start
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += seconds


@dataclass
class SandboxScope:
    """The sandbox a request or job runs for. Its offset is read once, on the first `now()`:
    one request sees one clock, and requests that never read the time pay nothing."""

    org_id: str
    offset: float | None = None
    pinned: float | None = None  # an advance runs each due item at its own due time
    # The clock's version as the request's key check read it (one statement for both): the
    # offset is then read without asking the store whether the clock moved.
    clock_version: int | None = None


class OffsetReader(Protocol):
    def __call__(self, org_id: str, latest_version: int | None = None) -> float:
        """How far `org_id`'s sandbox clock is ahead of real time, in seconds."""
        ...


def _no_offset(org_id: str, latest_version: int | None = None) -> float:
    return 0.0


_SCOPE: ContextVar[SandboxScope | None] = ContextVar("sandbox_clock_scope", default=None)


class TenantClock:
    """Real time, or the current sandbox's time. `offset_of(org_id)` reads a sandbox clock's
    offset from the event store (set once the store exists)."""

    def __init__(self, base: Clock) -> None:
        self.base = base
        self.offset_of: OffsetReader = _no_offset

    def now(self) -> float:
        scope = _SCOPE.get()
        if scope is None:
            return self.base.now()
        if scope.pinned is not None:
            return scope.pinned
        if scope.offset is None:
            scope.offset = self.offset_of(scope.org_id, scope.clock_version)
        return self.base.now() + scope.offset

    def real_now(self) -> float:
        """Real time whatever the scope: webhook envelopes and signatures, leases."""
        return self.base.now()

    def sandbox_now(self, org_id: str) -> float:
        scope = _SCOPE.get()
        if scope is not None and scope.org_id == org_id:
            return self.now()  # a request of that sandbox: its clock is read already
        return self.base.now() + self.offset_of(org_id)

    @contextmanager
    def scoped(
        self, org_id: str, environment: str, pinned: float | None = None
    ) -> Iterator[None]:
        """Read the sandbox clock of `org_id` inside (live: real time). Already inside that
        sandbox's scope (a job an advance runs at its due time), the time stays as it is."""
        current = _SCOPE.get()
        same_sandbox = environment == SANDBOX and current is not None and current.org_id == org_id
        if same_sandbox and pinned is None:
            yield
            return
        scope = SandboxScope(org_id, pinned=pinned) if environment == SANDBOX else None
        token = _SCOPE.set(scope)
        try:
            yield
        finally:
            _SCOPE.reset(token)


def enter_scope(org_id: str, environment: str, clock_version: int | None = None) -> object:
    """For ASGI middleware, which cannot hold a `with` around the app: the token to reset.
    `clock_version`: the sandbox clock's version, read for this request (None: not read)."""
    scope = SandboxScope(org_id, clock_version=clock_version) if environment == SANDBOX else None
    return _SCOPE.set(scope)


def leave_scope(token: object) -> None:
    _SCOPE.reset(token)  # type: ignore[arg-type]


def real_now(clock: Clock) -> float:
    """Real time from any clock (a TenantClock's base)."""
    return clock.real_now() if isinstance(clock, TenantClock) else clock.now()


# Zero-padded field texts, looked up rather than formatted: read models and replays format a
# timestamp or two per event.
_TWO_DIGITS = [f"{n:02d}" for n in range(100)]
_MILLIS_Z = [f"{n:03d}Z" for n in range(1000)]


def iso(ts: float) -> str:
    """ISO 8601 UTC with milliseconds, the one timestamp format of the API."""
    moment = datetime.fromtimestamp(ts, tz=UTC)
    if moment.year < 1000:
        # strftime's %Y does not pad years below 1000; keep its output for them.
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    # The same text as the strftime above for four-digit years, at a third of its cost.
    two = _TWO_DIGITS
    return (
        f"{moment.year}-{two[moment.month]}-{two[moment.day]}T{two[moment.hour]}:"
        f"{two[moment.minute]}:{two[moment.second]}.{_MILLIS_Z[moment.microsecond // 1000]}"
    )
