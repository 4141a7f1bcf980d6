"""The read models' position as another process commits it, followed by one thread for every
request of this process that waits on it (read-your-writes in a gateway of its own).

Each waiting request polling the position itself cost a query per request every few
milliseconds: under load most of a gateway's queries, and a fifth of its CPU on PostgreSQL.
SQLite: one thread reads it every few milliseconds while anyone waits. PostgreSQL: the read
models NOTIFY each position they commit (`announce_position`), and one connection LISTENs.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from infra.pg_listen import listen
from projections.position_gate import PositionGate

log = logging.getLogger(__name__)

# How often the position is read while anyone waits; nothing is read while no one does.
POLL_SECONDS = 0.003
RETRY_AFTER_FAILURE_SECONDS = 0.5
MAX_CHANNEL_BYTES = 63


class PositionWatch:
    def __init__(self, read_position: Callable[[], int], poll_seconds: float = POLL_SECONDS) -> None:
        self._read_position = read_position
        self._poll_seconds = poll_seconds
        self._gate = PositionGate(-1)  # -1: none read yet
        # The reader thread parks while no one waits.
        self._reader = threading.Condition()
        self._waiting = 0
        self._thread: threading.Thread | None = None
        self._closed = False
        self.moved_at = time.monotonic()

    @property
    def position(self) -> int:
        return self._gate.position

    def wait_for(self, target: int, timeout: float, stalled_after: float) -> bool:
        """Whether the position reached `target` before `timeout`; False early once it stood
        still for `stalled_after` seconds of this wait (the process applying it is down)."""
        started = time.monotonic()
        deadline = started + timeout
        if self._gate.position >= target:
            return True
        with self._reader:
            self._waiting += 1
            self._start_once()
            self._reader.notify_all()  # the reader may be parked with no one waiting
        try:
            while True:
                now = time.monotonic()
                still_for = now - max(self.moved_at, started)
                if now >= deadline or still_for >= stalled_after:
                    return self._gate.position >= target
                # Woken when the target is reached, or to see whether the position stalled.
                if self._gate.wait_for(target, min(deadline - now, stalled_after - still_for)):
                    return True
        finally:
            with self._reader:
                self._waiting -= 1

    def close(self) -> None:
        """Stops the reader (a closing container: its database goes with it)."""
        with self._reader:
            self._closed = True
            self._reader.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=2.0)

    def _start_once(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="position-watch", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._reader:
                while not self._waiting and not self._closed:
                    self._reader.wait()
                if self._closed:
                    return
            try:
                position = self._read_position()
            except Exception:
                log.exception("reading the read models' position failed; retrying")
                time.sleep(RETRY_AFTER_FAILURE_SECONDS)
                continue
            self._moved_to(position)
            time.sleep(self._poll_seconds)

    def _moved_to(self, position: int, forward_only: bool = False) -> None:
        now = time.monotonic()
        if self._gate.move_to(position, forward_only):
            self.moved_at = now


def position_channel(schema: str) -> str:
    """The channel the read models of a PostgreSQL schema announce their position on: within
    PostgreSQL's 63 bytes (pg_notify refuses a longer name, where LISTEN cuts it short)."""
    channel = f"{schema}_read_models"
    if len(channel.encode()) <= MAX_CHANNEL_BYTES:
        return channel
    return f"read_models_{hashlib.sha256(schema.encode()).hexdigest()[:40]}"


def announce_position(cur: Any, channel: str, position: int) -> None:
    """In the transaction that commits the position: PostgreSQL sends it at the commit."""
    cur.execute("SELECT pg_notify(?, ?)", (channel, str(position)))


class ListeningPositionWatch(PositionWatch):
    """The position from the read models' notifications: no query while requests wait, and a
    waiting request learns of the commit as it happens rather than at the next poll."""

    def __init__(self, read_position: Callable[[], int], url: str, channel: str) -> None:
        super().__init__(read_position)
        self._url = url
        self._channel = channel

    def _run(self) -> None:
        listen(
            self._url,
            self._channel,
            stopped=lambda: self._closed,
            on_listening=lambda: self._moved_to(self._read_position()),
            # Forward only: a commit notified after a read may be older.
            on_note=lambda payload: self._moved_to(int(payload), forward_only=True),
            on_quiet=self._read_if_waited_on,
        )

    def _read_if_waited_on(self) -> None:
        """No notification for a while: should they have stopped (a projections process of an
        older release), requests that wait still see the position move."""
        if self._waiting:
            self._moved_to(self._read_position(), forward_only=True)
