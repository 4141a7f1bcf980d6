"""Blocking work (store reads and saves, SQL) run off the event loop, in a shared thread pool.

anyio's `to_thread.run_sync` hands each call to an idle worker thread of its own and wakes
that one thread, every time: with PostgreSQL every request makes such hand-offs (the key check,
the work), and on a virtual machine waking a sleeping thread costs more CPU than the hand-off
itself (a micro-benchmark under load: about 115 µs per hand-off through anyio, 35-50 µs through
one `ThreadPoolExecutor`, whose threads take the next job from one queue without sleeping
while there is one). The caller's context variables go along, as with anyio: the sandbox clock
a request reads is one.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

# As many as anyio's default limit, which this replaces: enough for every store connection a
# process may open (three times the pool setting) with room for work that holds none.
MAX_THREADS = 40

_pool: tuple[int, ThreadPoolExecutor] | None = None


def _executor() -> ThreadPoolExecutor:
    """The process's pool; a forked child makes its own (a parent's threads do not follow)."""
    global _pool
    pid = os.getpid()
    if _pool is None or _pool[0] != pid:
        _pool = (pid, ThreadPoolExecutor(MAX_THREADS, thread_name_prefix="blocking"))
    return _pool[1]


async def run_blocking(call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """`call(*args, **kwargs)` in a pool thread, with this task's context variables.

    Cancelling the awaiting task does not stop the call: it runs to its end, as a save must,
    and its result is dropped."""
    context = contextvars.copy_context()
    bound = functools.partial(context.run, call, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(_executor(), bound)
