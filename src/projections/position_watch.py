"""The read models' position as another process commits it, read by one thread for every
request of this process that waits on it (read-your-writes in a gateway of its own).

Each waiting request polling the position itself cost a query per request every few
milliseconds: under load most of a gateway's queries, and a fifth of its CPU on PostgreSQL.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

# How often the position is read while anyone waits; nothing is read while no one does.
POLL_SECONDS = 0.003
RETRY_AFTER_FAILURE_SECONDS = 0.5


class PositionWatch:
    def __init__(self, read_position: Callable[[], int], poll_seconds: float = POLL_SECONDS) -> None:
        self._read_position = read_position
        self._poll_seconds = poll_seconds
        self._changed = threading.Condition()
        self._waiting = 0
        self._thread: threading.Thread | None = None
        self._closed = False
        self.position = -1  # none read yet
        self.moved_at = time.monotonic()

    def wait_for(self, target: int, timeout: float, stalled_after: float) -> bool:
        """Whether the position reached `target` before `timeout`; False early once it stood
        still for `stalled_after` seconds of this wait (the process applying it is down)."""
        started = time.monotonic()
        deadline = started + timeout
        with self._changed:
            self._waiting += 1
            self._start_once()
            self._changed.notify_all()  # the reader may be parked with no one waiting
            try:
                while self.position < target:
                    now = time.monotonic()
                    if now >= deadline or now - max(self.moved_at, started) >= stalled_after:
                        return False
                    self._changed.wait(min(deadline - now, stalled_after))
                return True
            finally:
                self._waiting -= 1

    def close(self) -> None:
        """Stops the reader (a closing container: its database goes with it)."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=2.0)

    def _start_once(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="position-watch", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._waiting and not self._closed:
                    self._changed.wait()
                if self._closed:
                    return
            try:
                position = self._read_position()
            except Exception:
                log.exception("reading the read models' position failed; retrying")
                time.sleep(RETRY_AFTER_FAILURE_SECONDS)
                continue
            with self._changed:
                if position != self.position:
                    self.position, self.moved_at = position, time.monotonic()
                    self._changed.notify_all()
            time.sleep(self._poll_seconds)
