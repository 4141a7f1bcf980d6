"""Blocking lookups for many waiting coroutines, one worker-thread hop for all of them.

Each delivery needs its organization's endpoint read just before its attempt; a thread hop of
its own per delivery costs more than the read. Callers that ask while a batch is being looked
up wait for the next batch, so every answer comes from a read started after it was asked for:
the same freshness as a read of one's own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from infra.blocking import run_blocking

Key = TypeVar("Key", bound=Hashable)
Value = TypeVar("Value")


class BatchedLookup(Generic[Key, Value]):
    """`look_up_all(keys)` answers every key asked for (a value, or the exception that key's
    lookup raised), for one hop's worth of waiters."""

    def __init__(self, look_up_all: Callable[[list[Key]], dict[Key, Value | Exception]]) -> None:
        self._look_up_all = look_up_all
        self._waiting: dict[Key, list[asyncio.Future[Value]]] = {}
        self._runner: asyncio.Task[None] | None = None

    async def get(self, key: Key) -> Value:
        future: asyncio.Future[Value] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(key, []).append(future)
        if self._runner is None or self._runner.done():
            self._runner = asyncio.create_task(self._run(), name="batched-lookup")
        return await future

    async def _run(self) -> None:
        while self._waiting:
            batch, self._waiting = self._waiting, {}
            try:
                found = await run_blocking(self._look_up_all, list(batch))
            except asyncio.CancelledError:
                for futures in batch.values():
                    for future in futures:
                        future.cancel()
                raise
            except Exception as exc:  # noqa: BLE001 - the waiters get it, the next batch runs
                found = dict.fromkeys(batch, exc)
            for key, futures in batch.items():
                for future in futures:
                    if not future.done():  # done: its waiter was cancelled
                        _settle(future, found[key])

    async def close(self) -> None:
        if self._runner is not None:
            self._runner.cancel()
            await asyncio.gather(self._runner, return_exceptions=True)



def _settle(future: asyncio.Future[Value], result: Value | Exception) -> None:
    if isinstance(result, Exception):
        future.set_exception(result)
    else:
        future.set_result(result)
