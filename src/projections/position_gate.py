"""A position that moves forward, and the threads waiting for it to reach theirs.

Each waiter is woken once, when the position reaches its own target. A condition's
`notify_all` on every move woke every waiting request on every commit of the read models,
and most went back to sleep at once: under load in a gateway about thirty wake-ups per order,
each a thread put to sleep and woken again, which a virtual machine makes dear.
"""

from __future__ import annotations

import heapq
import itertools
import threading


class PositionGate:
    def __init__(self, position: int = 0) -> None:
        self._lock = threading.Lock()
        self.position = position
        # (target, arrival order, its event): the lowest target first.
        self._waiting: list[tuple[int, int, threading.Event]] = []
        self._arrivals = itertools.count()

    def move_to(self, position: int, forward_only: bool = False) -> bool:
        """Set the position (only forward, if asked); wakes the waiters it reached. Whether it
        moved."""
        with self._lock:
            moved = position > self.position if forward_only else position != self.position
            if moved:
                self.position = position
                while self._waiting and self._waiting[0][0] <= position:
                    heapq.heappop(self._waiting)[2].set()
            return moved

    def wait_for(self, target: int, timeout: float) -> bool:
        """Whether the position reached `target` within `timeout` seconds."""
        with self._lock:
            if self.position >= target:
                return True
            entry = (target, next(self._arrivals), threading.Event())
            heapq.heappush(self._waiting, entry)
        if entry[2].wait(timeout):
            return True
        with self._lock:
            if not entry[2].is_set():
                self._waiting.remove(entry)
                heapq.heapify(self._waiting)
            return self.position >= target
