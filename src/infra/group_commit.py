"""Group commit: the saves of concurrent requests share one transaction, so one commit (one WAL
flush) serves them all.

A save waits for the commit that holds it, exactly as before: it returns only once its events
are durable, and fails alone (an optimistic-concurrency conflict of one save never fails the
others of its batch). No thread is added: the first save to find no batch being written writes
one itself (the leader), taking every save waiting at that moment; saves that arrive while it
commits wait, and the first of them leads the next batch. A save alone is written at once, as
before; under load a batch holds whatever queued behind the last commit.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from eventsourcing.persistence import IntegrityError, StoredEvent
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteDatastore

T = TypeVar("T")
R = TypeVar("R")


class Pending(Generic[T, R]):
    """One save: what it writes, then its result or its error."""

    __slots__ = ("item", "result", "error", "_done", "leads")

    def __init__(self, item: T) -> None:
        self.item = item
        self.result: R | None = None
        self.error: BaseException | None = None
        self._done = threading.Event()
        self.leads = False  # woken to write the next batch rather than with its result

    def settle(self, result: R | None = None, error: BaseException | None = None) -> None:
        self.result, self.error = result, error

    def wake(self) -> None:
        self._done.set()

    def wait(self) -> None:
        self._done.wait()
        self._done.clear()


class GroupCommit(Generic[T, R]):
    """Runs `write_batch` over the saves waiting together; each gets its own result or error
    (`write_batch` settles every Pending it is given)."""

    def __init__(self, write_batch: Callable[[Sequence[Pending[T, R]]], None]) -> None:
        self._write_batch = write_batch
        self._lock = threading.Lock()
        self._waiting: list[Pending[T, R]] = []
        self._writing = False

    def submit(self, item: T) -> R | None:
        mine: Pending[T, R] = Pending(item)
        with self._lock:
            self._waiting.append(mine)
            leads = not self._writing
            self._writing = True
        if not leads:
            mine.wait()
            leads = mine.leads
        if leads:
            self._lead()
        if mine.error is not None:
            raise mine.error
        return mine.result

    def _lead(self) -> None:
        with self._lock:
            batch, self._waiting = self._waiting, []
        try:
            self._write_batch(batch)
        except BaseException as error:  # every save of the batch learns of it
            for pending in batch:
                if pending.error is None and pending.result is None:
                    pending.settle(error=error)
        finally:
            with self._lock:
                following = self._waiting[0] if self._waiting else None
                if following is None:
                    self._writing = False
                else:
                    following.leads = True
            for pending in batch:
                pending.wake()
            if following is not None:
                following.wake()


class GroupCommitSQLiteRecorder(SQLiteApplicationRecorder):
    """eventsourcing's SQLite recorder, its saves committed in groups: each save of a batch
    under a savepoint of the one transaction, so a conflict rolls back that save alone."""

    def __init__(self, datastore: SQLiteDatastore, events_table_name: str = "stored_events"
                 ) -> None:
        super().__init__(datastore, events_table_name)
        self._group: GroupCommit[Sequence[StoredEvent], Sequence[int]] = GroupCommit(
            self._write_batch
        )

    def insert_events(
        self, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        return self._group.submit(stored_events)

    def _write_batch(self, batch: Sequence[Pending[Sequence[StoredEvent], Sequence[int]]]
                     ) -> None:
        outcomes: list[tuple[list[int] | None, BaseException | None]] = []
        with self.datastore.transaction(commit=True) as cursor:
            for pending in batch:
                cursor.execute("SAVEPOINT save")
                try:
                    ids = self._insert_events(cursor, pending.item)
                except sqlite3.IntegrityError as conflict:
                    cursor.execute("ROLLBACK TO save")
                    outcomes.append((None, IntegrityError(conflict)))
                else:
                    outcomes.append((list(ids or []), None))
                cursor.execute("RELEASE save")
        # Only now, the commit done, is any of them saved.
        for pending, (ids, failure) in zip(batch, outcomes, strict=True):
            pending.settle(ids, failure)
