"""Follow the notification log from a tracked position, exactly once per follower.

The SQLite recorder has no subscriptions, so one polling loop serves both stores; a save in
the same process wakes it at once. For read models the handler's writes and the new position
commit in one transaction, so each event is applied exactly once and a restart resumes.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from eventsourcing.domain import DomainEventProtocol
from eventsourcing.persistence import Notification

from infra.database import Database
from infra.store import EventStore
from projections.batched_writes import BatchedWrites
from projections.position_gate import PositionGate

log = logging.getLogger(__name__)

Handler = Callable[[Any, DomainEventProtocol[Any], int], None]

# The longest a batch runs before it commits what it applied (see `ReadModels.wait_for`).
MAX_BATCH_SECONDS = 0.5


def ensure_tracking_table(db: Database) -> None:
    with db.transaction() as cur:
        cur.execute(
            "CREATE TABLE IF NOT EXISTS tracking (name TEXT PRIMARY KEY, "
            "notification_id BIGINT NOT NULL)"
        )


def tracked_position(db: Database, name: str) -> int:
    # A plain read, not a write transaction: every follower asks on every poll, and on SQLite
    # a write transaction takes the one write lock. A stale answer is safe: the batch that
    # follows only advances from the position it read (advance_tracking).
    with db.read() as cur:
        return position_in(cur, name)


def position_in(cur: Any, name: str) -> int:
    """The position as `cur` sees it (a snapshot's cursor, say)."""
    row = cur.execute("SELECT notification_id FROM tracking WHERE name = ?", (name,)).fetchone()
    return int(row["notification_id"]) if row else 0


class TrackingMoved(RuntimeError):
    """Another runner (or a lost commit) left the stored position elsewhere than expected."""


def advance_tracking(cur: Any, name: str, previous: int, position: int) -> None:
    """Move the position forward, refusing if another runner moved it first."""
    sql, params = _advance_statement(name, previous, position)
    # RETURNING: the row itself says the compare-and-set took (in pipeline mode the fetch
    # waits for this statement's result).
    if cur.execute(sql, params).fetchone() is None:
        raise TrackingMoved(f"tracking {name} moved by another runner; batch rolled back")


def advance_tracking_alone(db: Database, name: str, previous: int, position: int) -> None:
    """`advance_tracking` as a transaction of its own: one statement, so one round trip
    instead of three (BEGIN and COMMIT around it)."""
    if not db.statement(*_advance_statement(name, previous, position)):
        raise TrackingMoved(f"tracking {name} moved by another runner; not advanced")


def _advance_statement(name: str, previous: int, position: int) -> tuple[str, tuple[Any, ...]]:
    if previous == 0:  # no row yet, or one still at 0
        return (
            "INSERT INTO tracking (name, notification_id) VALUES (?, ?) ON CONFLICT (name) "
            "DO UPDATE SET notification_id = excluded.notification_id "
            "WHERE tracking.notification_id = 0 RETURNING name",
            (name, position),
        )
    return (
        "UPDATE tracking SET notification_id = ? WHERE name = ? AND notification_id = ? "
        "RETURNING name",
        (position, name, previous),
    )


class Follower:
    def __init__(
        self,
        store: EventStore,
        db: Database,
        name: str,
        handle: Handler,
        *,
        topics: Sequence[str] = (),
        batch_size: int = 500,
        poll_interval: float = 0.05,
        after_batch: Callable[[], None] | None = None,
        announce: Callable[[Any, int], None] | None = None,
        batch_writes: bool = False,
    ) -> None:
        self.store = store
        self.db = db
        self.name = name
        self.handle = handle
        self.topics = tuple(topics)
        self.batch_size = batch_size
        self.poll_interval = poll_interval
        self.after_batch = after_batch
        # Run in each batch's transaction with its new position (a NOTIFY, sent at commit).
        self.announce = announce
        # The handler's plain writes held back and sent per table at the end of the batch
        # (`BatchedWrites`): for handlers that never ask a write's row count.
        self.batch_writes = batch_writes
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._caught_up = PositionGate()
        # The position this follower last committed: read from the table only when unknown,
        # since the compare-and-set in advance_tracking catches a position moved meanwhile.
        self._committed: int | None = None
        self._thread: threading.Thread | None = None
        ensure_tracking_table(db)
        store.on_saved(lambda _id: self._wake.set())

    def select(self, after: int) -> Sequence[Notification]:
        return self.store.recorder.select_notifications(
            start=after + 1, limit=self.batch_size, topics=self.topics
        )

    def run_once(self) -> int:
        """Apply one batch; returns how many notifications were applied."""
        return self.run_batch()[0]

    def run_batch(self) -> tuple[int, bool]:
        """Apply one batch; returns how many notifications were applied and whether the log
        may hold more (the read came back full, or the batch stopped early)."""
        remembered = self._committed
        try:
            return self._apply_batch(remembered)
        except Exception:
            self._committed = None
            if remembered is None or tracked_position(self.db, self.name) == remembered:
                raise
            # Another runner moved the position since this one last committed (its batch
            # overlapped theirs and was rolled back): go on from where they got.
            return self._apply_batch(None)

    def _apply_batch(self, previous: int | None) -> tuple[int, bool]:
        if previous is None:
            previous = tracked_position(self.db, self.name)
        notifications = self.select(previous)
        if not notifications:
            self._committed = previous
            self._set_position(previous)
            return 0, False
        mapper = self.store.mapper
        self.store.remember_stored(notifications)
        applied = 0
        started = time.monotonic()
        # Pipeline mode on PostgreSQL: a batch's many small writes go out without a round trip
        # each, which under load kept every waiting request (read-your-writes) waiting longer.
        with self.db.bulk_transaction() as cur:
            writes = BatchedWrites(cur) if self.batch_writes else cur
            for notification in notifications:
                self.handle(writes, mapper.to_domain_event(notification), notification.id)
                applied += 1
                # A long catch-up commits as it goes: the position others wait on (and read
                # as a sign of life) moves at least this often.
                if time.monotonic() - started >= MAX_BATCH_SECONDS:
                    break
            if isinstance(writes, BatchedWrites):
                writes.flush()
            last = notifications[applied - 1].id
            advance_tracking(cur, self.name, previous, last)
            if self.announce is not None:
                self.announce(cur, last)
        self._committed = last
        self._set_position(last)
        if self.after_batch is not None:
            self.after_batch()
        return applied, applied == self.batch_size or applied < len(notifications)

    def catch_up(self) -> None:
        """Apply everything stored before this call. A batch that was not full read the log to
        its end: reading again would only find what was stored since (one more query, per
        follower and commit, that mostly came back empty)."""
        while self.run_batch()[1]:
            pass

    @property
    def position(self) -> int:
        """The last notification this follower applied (and committed)."""
        return self._caught_up.position

    def _set_position(self, position: int) -> None:
        self._caught_up.move_to(position)

    def wait_for(self, notification_id: int, timeout: float = 2.0) -> bool:
        """Block until this follower has applied the given notification (read-your-writes)."""
        self._wake.set()
        return self._caught_up.wait_for(notification_id, timeout)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name=f"follower-{self.name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _loop(self) -> None:
        while not self._stop.is_set():
            # Cleared before the read: a commit from here on wakes the wait below, so one that
            # lands during the batch is read next rather than at the next poll.
            self._wake.clear()
            try:
                _, more = self.run_batch()
            except Exception:
                log.exception("follower %s failed; retrying", self.name)
                more = False
                self._stop.wait(1.0)
            if not more:
                self._wake.wait(self.poll_interval)
