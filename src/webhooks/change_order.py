"""Webhooks of one change in the order `GET /events` lists them, also on the wire.

A change that completes something (`order.completed`, `swap.completed`) fires its parts' events
with it (`domain.connected` for each domain). The dispatcher sends fresh deliveries side by side;
left alone, a completion could reach the receiver before its parts. So the completion waits
until the first attempts of the other events of its change (same stored event) have ended;
their retries, if any, are not waited for. With several dispatchers, a part may be another's:
the completion names its parts (`outbox.message_of`), and waits until the deliveries table
shows their first attempts ended, wherever they were made.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict

from infra.blocking import run_blocking
from infra.database import Database
from webhooks.deliveries import Due, first_attempts_ended

POLL_SECONDS = 0.02
TAKEN_KEPT = 10_000


class ChangeOrder:
    def __init__(self) -> None:
        self._fresh: dict[str, set[asyncio.Task[None]]] = {}
        # The parts this dispatcher took, by change: a completion whose parts are all here
        # needs no look at the deliveries table (the usual case, one dispatcher or not).
        self._taken: OrderedDict[str, set[str]] = OrderedDict()

    def parts_of(self, due: Due) -> set[asyncio.Task[None]]:
        """The deliveries `due` goes after: none unless it says all of its change is done."""
        return set(self._fresh.get(due.change, ())) if due.after_parts else set()

    def taken_elsewhere(self, due: Due) -> tuple[str, ...]:
        """The parts `due` names that this dispatcher did not take."""
        if not due.parts:
            return ()
        here = self._taken.pop(due.change, set())
        return tuple(part for part in due.parts if part not in here)

    def track(self, due: Due, task: asyncio.Task[None]) -> None:
        """A first delivery under way, until it ends."""
        if not due.change or due.after_parts:
            return
        self._fresh.setdefault(due.change, set()).add(task)
        self._taken.setdefault(due.change, set()).add(due.event_id)
        self._taken.move_to_end(due.change)
        while len(self._taken) > TAKEN_KEPT:  # changes whose completion went elsewhere
            self._taken.popitem(last=False)
        task.add_done_callback(lambda done: self._forget(due.change, done))

    def _forget(self, change: str, task: asyncio.Task[None]) -> None:
        fresh = self._fresh.get(change)
        if fresh is not None:
            fresh.discard(task)
            if not fresh:
                del self._fresh[change]


async def after(parts: set[asyncio.Task[None]], longest: float) -> bool:
    """Wait for the parts (at most `longest` seconds); whether there were any."""
    if not parts:
        return False
    await asyncio.wait(parts, timeout=longest)
    return True


async def after_named_parts(db: Database, parts: tuple[str, ...], longest: float) -> bool:
    """Wait (`longest` seconds at most) until these parts, which another dispatcher took, had
    their first attempts; whether it waited."""
    if not parts:
        return False
    loop = asyncio.get_running_loop()
    deadline = loop.time() + longest
    waited = False
    while not await run_blocking(first_attempts_ended, db, parts):
        if loop.time() >= deadline:
            break
        waited = True
        await asyncio.sleep(POLL_SECONDS)
    return waited
