"""The sandbox clock use cases (decisions.md 6): read it, move it forward, and run what comes
due on the way, in time order, each item once.

An advance first notes the organization in `sandbox_clock_sweeps` (an operational to-do row),
then saves `SandboxClock.Advanced` (the version check orders two advances of one clock), runs
every due item with the clock pinned at the item's due time, makes the due webhook attempts at
the new time, and saves `Settled`. A process that dies in between leaves the row: the next
advance, or the sandbox-clock worker after a restart, runs what is left.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import TYPE_CHECKING

import msgspec

from domain.errors import DomainError, NotFound, invalid
from domain.sandbox_clocks import MAX_ADVANCE_SECONDS, SandboxClock, sandbox_clock_id
from infra.clock import SANDBOX, iso
from services.accounts.keys import Principal
from services.sandbox.commands import AdvanceSandboxClock
from services.sandbox.due import KINDS, RUNNERS, WEBHOOK_ATTEMPTS, attempt_due_webhooks, due_items
from views.sandbox import AdvancedOut, CameDueOut, ClockOut

if TYPE_CHECKING:
    from runtime.container import Container

SWEEPS_DDL = (
    "CREATE TABLE IF NOT EXISTS sandbox_clock_sweeps (org_id TEXT PRIMARY KEY, "
    "noted_at DOUBLE PRECISION NOT NULL)"
)
# The organizations whose sandbox clock was ever moved: between advances their clock runs
# ahead of real time, and the fulfillment worker runs what comes due on it (`settle`).
CLOCKS_DDL = "CREATE TABLE IF NOT EXISTS sandbox_clocks (org_id TEXT PRIMARY KEY)"


def load_clock(container: Container, org_id: str) -> SandboxClock:
    found = container.store.find(sandbox_clock_id(org_id), SandboxClock)
    return found if isinstance(found, SandboxClock) else SandboxClock(org_id=org_id)


def clock_view(container: Container, org_id: str) -> ClockOut:
    clock = load_clock(container, org_id)
    return ClockOut(
        now=iso(container.clock.real_now() + clock.offset), advanced_seconds=int(clock.offset)
    )


def sandbox_org(principal: Principal) -> str:
    """Live keys have no sandbox clock: 404, as for any resource of another environment."""
    if principal.environment != SANDBOX:
        raise NotFound("sandbox clock (live keys run on real time)")
    return principal.org_id


def get_sandbox_clock(container: Container, principal: Principal) -> ClockOut:
    return clock_view(container, sandbox_org(principal))


def advance_sandbox_clock(
    container: Container, principal: Principal, command: AdvanceSandboxClock
) -> AdvancedOut:
    org_id = sandbox_org(principal)
    seconds, target = advance_of(container, org_id, command)
    return advance_clock(container, org_id, seconds, target)


def advance_of(
    container: Container, org_id: str, command: AdvanceSandboxClock
) -> tuple[float, float | None]:
    """The command's advance in seconds, and the sandbox time it moves to when it names one:
    `seconds`, or the distance to `to`, never both."""
    if (command.seconds is None) == (command.to is None):
        field = "to" if command.seconds is not None else "seconds"
        raise invalid("Send either `seconds` or `to`, exactly one of them.", field)
    if command.seconds is not None:
        if not 1 <= command.seconds <= MAX_ADVANCE_SECONDS:
            raise invalid(f"seconds must be 1 to {MAX_ADVANCE_SECONDS:,}.", "seconds")
        return command.seconds, None
    assert command.to is not None
    try:
        target = datetime.fromisoformat(command.to.replace("Z", "+00:00"))
    except ValueError:
        raise invalid("to must be an ISO 8601 time, e.g. 2027-01-01T00:00:00Z.", "to") from None
    if target.tzinfo is None:
        raise invalid("to must name its time zone (Z or an offset).", "to")
    seconds = seconds_to(container, org_id, target.timestamp())
    if seconds > MAX_ADVANCE_SECONDS:
        raise invalid(f"One advance moves at most {MAX_ADVANCE_SECONDS:,} seconds.", "to")
    return seconds, _end_of_millisecond(target.timestamp())


def _end_of_millisecond(moment: float) -> float:
    """The last instant the API's millisecond timestamps print as `moment`'s: an advance to
    an order's `cancel_at` reaches the grace window's end, which that text truncated."""
    return math.floor(moment * 1000) / 1000 + 0.0009


def seconds_to(container: Container, org_id: str, target: float) -> float:
    """The advance that reaches `target` (sandbox time), which must be later than now."""
    now = container.clock.real_now() + load_clock(container, org_id).offset
    if target <= now:
        raise DomainError(
            "invalid_request", "`to` must be later than the sandbox clock's now.", field="to",
            details={"now": iso(now)},
        )
    return target - now


def advance_clock(
    container: Container, org_id: str, seconds: float, target: float | None = None
) -> AdvancedOut:
    """Move the clock `seconds` forward, or to `target` exactly when one is named, and run
    what comes due; answers the time it moved to and how many of each kind this advance ran."""
    _note_sweep(container, org_id)

    def record() -> tuple[float, float]:
        real = container.clock.real_now()
        clock = load_clock(container, org_id)
        # Measured again at the save: the request's own time since the check would otherwise
        # carry the clock past `to`. An advance racing this one past it keeps `seconds`.
        if target is not None and target > real + clock.offset:
            seconds_now = target - (real + clock.offset)
        else:
            seconds_now = seconds
        clock.advance(seconds_now, real)
        container.store.save(clock)
        return float(clock.offset), real + clock.offset

    offset, moved_to = container.unit_of_work.retrying(record)
    came_due = msgspec.convert(settle(container, org_id, offset, until=moved_to), CameDueOut)
    return AdvancedOut(now=iso(moved_to), advanced_seconds=int(offset), came_due=came_due)


def settle(
    container: Container, org_id: str, offset: float, wait: bool = True,
    until: float | None = None,
) -> dict[str, int]:
    """Run everything of this sandbox due by real time + `offset` (an advance: by the time it
    moved the clock to, which its answer names; what the clock's own running brings due after
    that is the worker's, as any time passing), then record it settled."""
    if wait:  # what the advance's own request stored (a cancel just before) is in the lists
        container.unit_of_work.wait_for_stored()
    now = container.clock.real_now() + offset if until is None else until
    counts = dict.fromkeys(KINDS, 0)
    for item in due_items(container, org_id, now):
        with container.clock.scoped(org_id, SANDBOX, pinned=item.due_at):
            ran = RUNNERS[item.kind](container, item.ref)
            if ran:
                counts[ran if isinstance(ran, str) else item.kind] += 1
    with container.clock.scoped(org_id, SANDBOX, pinned=now):
        counts[WEBHOOK_ATTEMPTS] = attempt_due_webhooks(container, org_id, now)

    def record() -> None:
        clock = load_clock(container, org_id)
        if clock.settled_offset < offset:
            clock.settle(offset)
            container.store.save(clock)

    container.unit_of_work.retrying(record)
    if not load_clock(container, org_id).unsettled:
        with container.ops_db.transaction() as cur:
            cur.execute("DELETE FROM sandbox_clock_sweeps WHERE org_id = ?", (org_id,))
    return counts


def _note_sweep(container: Container, org_id: str) -> None:
    with container.ops_db.transaction() as cur:
        cur.execute(SWEEPS_DDL)
        cur.execute(CLOCKS_DDL)
        cur.execute(
            "INSERT INTO sandbox_clocks (org_id) VALUES (?) ON CONFLICT (org_id) DO NOTHING",
            (org_id,),
        )
        cur.execute(
            "INSERT INTO sandbox_clock_sweeps (org_id, noted_at) VALUES (?, ?) "
            "ON CONFLICT (org_id) DO UPDATE SET noted_at = excluded.noted_at",
            (org_id, container.clock.real_now()),
        )


def moved_clocks(container: Container) -> list[str]:
    """The organizations whose sandbox clock was moved, or whose advance is unsettled."""
    with container.ops_db.transaction() as cur:
        cur.execute(SWEEPS_DDL)
        cur.execute(CLOCKS_DDL)
        rows = cur.execute(
            "SELECT org_id FROM sandbox_clocks UNION SELECT org_id FROM sandbox_clock_sweeps"
        ).fetchall()
    return [str(row["org_id"]) for row in rows]


def run_due(container: Container, org_id: str, abandoned_before: float) -> dict[str, int]:
    """The worker's pass over one moved clock: what came due on it since (a sandbox clock
    keeps running after an advance), and what an advance cut short by a crash left (noted
    before `abandoned_before`). An advance still running keeps what comes due on its way:
    its answer counts them."""
    clock = load_clock(container, org_id)
    offset = clock.offset
    if clock.unsettled:
        with container.ops_db.read() as cur:
            row = cur.execute(
                "SELECT noted_at FROM sandbox_clock_sweeps WHERE org_id = ?", (org_id,)
            ).fetchone()
        if row is not None and float(row["noted_at"]) >= abandoned_before:
            offset = clock.settled_offset
    return settle(container, org_id, offset, wait=False)
