"""The loop every background worker role shares: run a pass, sleep until woken or the interval.

Workers poll because SQLite has no LISTEN/NOTIFY; a save in this process (or, for workers that
read a read model, a batch of the events they list applied by this process) wakes them at once,
and the interval bounds how late they notice work stored by other processes.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, ClassVar

from infra.blocking import run_blocking

if TYPE_CHECKING:
    from runtime.container import Container


log = logging.getLogger(__name__)

RETRY_AFTER_FAILURE_SECONDS = 1.0


class PollingWorker(ABC):
    """Subclasses set `thread_name` and implement `run_once`; `start`/`stop` follow the role API."""

    thread_name = "worker"
    # Workers whose to-do list is a read model name the events that add to it: they wake when
    # this process's read models applied one. None: wake on every save in this process.
    wake_on: ClassVar[frozenset[str] | None] = None

    def __init__(self, container: Container, interval: float) -> None:
        self.container = container
        self.interval = interval
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if self.wake_on is None:
            container.store.on_saved(lambda _id: self._wake.set())
        else:
            container.read_models.on_applied(self._wake_if_listed)

    def _wake_if_listed(self, applied: set[str]) -> None:
        assert self.wake_on is not None
        if not self.wake_on.isdisjoint(applied):
            self._wake.set()

    @abstractmethod
    def run_once(self) -> object:
        """One pass over the due work; called again on every wake-up."""

    def run_each(self, job_ids: Iterable[str], move: Callable[[Container, str], object]) -> None:
        """`move` on every job of a pass: one job that fails is logged and retried next pass,
        and does not hold back the jobs listed after it."""
        for job_id in job_ids:
            try:
                move(self.container, job_id)
            except Exception:
                log.exception("%s: job %s failed; it is retried next pass", self.thread_name,
                              job_id)

    def _loop(self) -> None:
        while not self._stop.is_set():
            # Cleared before the pass: a wake-up during it runs the next pass at once instead
            # of being lost to a clear after the wait.
            self._wake.clear()
            try:
                self.run_once()
            except Exception:
                # One bad pass must not end the role; the next pass retries the same work.
                log.exception("%s pass failed; retrying", self.thread_name)
                self._stop.wait(RETRY_AFTER_FAILURE_SECONDS)
            self._wake.wait(self.interval)

    async def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name=self.thread_name, daemon=True)
        self._thread.start()

    async def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            await run_blocking(self._thread.join, 10.0)
