"""An organization's lane of webhook attempts: started one after another in due order, so a
receiver that answers sees them in that order (a bulk redelivery oldest first, decisions 7),
but a receiver that hangs holds the lane for `PATIENCE_SECONDS` at most per attempt, not for
the whole 15-second time-out: the next attempt starts beside the slow one. One hanging
endpoint with many failed events would otherwise push its later retries hours past the
schedule (24 hours for five attempts, spec 6)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

PATIENCE_SECONDS = 1.0
# Posts at once to one organization's endpoint, each over a kept-alive connection of its own.
CONNECTIONS_PER_ORG = 8


async def in_due_order(
    items: Iterable[T],
    attempt: Callable[[T], Awaitable[R]],
    patience: float = PATIENCE_SECONDS,
) -> list[R]:
    """Each item's attempt, started in order once the one before it finished or ran longer
    than `patience`; their results, in order, once all finished."""
    started: list[asyncio.Task[R]] = []
    for item in items:
        task = asyncio.ensure_future(attempt(item))
        started.append(task)
        await asyncio.wait({task}, timeout=patience)
    return list(await asyncio.gather(*started))
