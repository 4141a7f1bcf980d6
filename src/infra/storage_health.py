"""What a full disk looks like from here, and the record of it that readiness reads.

A full disk reaches the service as many different exceptions: SQLite's "database or disk is
full" (wrapped by eventsourcing in its own OperationalError), PostgreSQL's `DiskFull`, an
`OSError` with ENOSPC, or a JetStream publish the server refused. All of them mean the same
to a client (retry later; nothing was written), so they are recognised in one place.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import threading
import time
from pathlib import Path

import psycopg.errors

SQLITE_FULL = 13
# What ENOSPC becomes when SQLite extends its WAL index (a first connection to a database on a
# full disk, which cannot even read) or writes a page: SQLite names them I/O errors.
SQLITE_IOERR_WRITE = 778
SQLITE_IOERR_SHMSIZE = 4874
_FULL_WORDS = ("database or disk is full", "no space left on device", "insufficient storage")
# How long one failure keeps readiness down: a write that failed a moment ago will fail again
# unless space came back, and a single success (a small write finding room in a WAL file it
# reuses) does not prove a large one would. For NATS, longer than the outbox takes to fail
# again (a 10 s ack time-out, then 1 s), so a JetStream that keeps failing never looks well
# in between; its next acknowledged batch ends the hold at once (`succeeded`).
FAILURE_HOLD_SECONDS = 5.0
HOLD_SECONDS_BY_COMPONENT = {"nats": 15.0}
# Room a transaction needs at least: a few WAL frames of 4 KB pages and their index.
PROBE_BYTES = 64 * 1024


def storage_full(error: BaseException | None) -> bool:
    """Whether `error`, or any error it was raised from, says the disk (or the database's
    disk) is full."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if _says_full(error):
            return True
        error = error.__cause__ or error.__context__
    return False


def _says_full(error: BaseException) -> bool:
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    if isinstance(error, psycopg.errors.DiskFull):
        return True
    if isinstance(error, sqlite3.Error):
        code = getattr(error, "sqlite_errorcode", 0)
        if code & 0xFF == SQLITE_FULL or code in (SQLITE_IOERR_WRITE, SQLITE_IOERR_SHMSIZE):
            return True
    text = str(error).lower()
    return any(words in text for words in _FULL_WORDS)


def room_to_write(directory: Path, size: int = PROBE_BYTES) -> str:
    """`ok` when the file system under `directory` is writable and has `size` bytes free for
    this process (root may use the blocks reserved for it), else why not. Asked of the file
    system, so the check itself writes nothing: readiness runs it every few seconds."""
    try:
        found = os.statvfs(directory)
    except OSError as exc:
        return f"error: {exc.strerror}"
    if found.f_flag & os.ST_RDONLY:
        return "error: cannot write (read-only file system)"
    blocks = found.f_bfree if os.geteuid() == 0 else found.f_bavail
    if blocks * found.f_frsize < size:
        return "error: cannot write (no space left on device)"
    return "ok"


class StorageHealth:
    """Storage failures seen by this process, by component (`event_store`, `nats`, ...)."""

    def __init__(self) -> None:
        self._failures: dict[str, tuple[float, str]] = {}
        self._lock = threading.Lock()

    def failed(self, component: str, error: BaseException | str) -> None:
        reason = error if isinstance(error, str) else _describe(error)
        with self._lock:
            self._failures[component] = (time.monotonic(), reason)

    def succeeded(self, component: str) -> None:
        """A write `component` needed went through (a batch JetStream acknowledged): whatever
        failed before is over."""
        with self._lock:
            self._failures.pop(component, None)

    def recent(self, component: str) -> str | None:
        """Why `component` failed within the hold, or None."""
        found = self._recent(component)
        return None if found is None else found[1]

    def failed_at(self, component: str) -> float | None:
        """When (`time.monotonic()`) `component` last failed, within the hold, or None."""
        found = self._recent(component)
        return None if found is None else found[0]

    def _recent(self, component: str) -> tuple[float, str] | None:
        with self._lock:
            found = self._failures.get(component)
        hold = HOLD_SECONDS_BY_COMPONENT.get(component, FAILURE_HOLD_SECONDS)
        if found is None or time.monotonic() - found[0] > hold:
            return None
        return found


def _describe(error: BaseException) -> str:
    if storage_full(error):
        return "storage full"
    return type(error).__name__
