"""A tamper-evident hash chain over the stored events.

Entry i = sha256(entry i-1 || id || originator_id || version || topic || state), every field
length-prefixed so no two different rows hash alike. A follower of the notification log keeps
the chain current; `verify` recomputes it from the stored events table, so an edited row, a
deleted row or a row slipped in between two sealed ones is reported with its position.
"""

from __future__ import annotations

import hashlib
import logging
import struct
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from eventsourcing.persistence import Notification

from audit.records import read_notifications
from infra.database import Database
from infra.store import EventStore

log = logging.getLogger(__name__)

GENESIS = "0" * 64
TABLE = "audit_chain"
DDL = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} (notification_id BIGINT PRIMARY KEY, "
    "digest TEXT NOT NULL)"
)


def ensure_chain_table(db: Database) -> None:
    with db.transaction() as cur:
        cur.execute(DDL)


def _state_bytes(state: object) -> bytes:
    # SQLite stores whatever it is given: a hand-edited row may come back as text.
    return state.encode() if isinstance(state, str) else bytes(state)  # type: ignore[call-overload]


def link(previous: str, notification: Notification) -> str:
    digest = hashlib.sha256(bytes.fromhex(previous))
    for part in (
        str(notification.id).encode(),
        str(notification.originator_id).encode(),
        str(notification.originator_version).encode(),
        notification.topic.encode(),
        _state_bytes(notification.state),
    ):
        digest.update(struct.pack(">Q", len(part)))
        digest.update(part)
    return digest.hexdigest()


def chain_head(cur: Any) -> tuple[int, str]:
    row = cur.execute(
        f"SELECT notification_id, digest FROM {TABLE} ORDER BY notification_id DESC LIMIT 1"
    ).fetchone()
    return (int(row["notification_id"]), str(row["digest"])) if row else (0, GENESIS)


BATCH = 1000
# As the dispatcher's attempts (webhooks/deliveries.py): arrays cost more for a few rows.
AT_ONCE_FROM = 8


def extend(store: EventStore, db: Database, batch: int = BATCH) -> int:
    """Seal the next batch of stored events; returns how many were added."""
    with db.bulk_transaction() as cur:  # many inserts, none read back
        return seal_after(cur, store, chain_head(cur), batch, db.dialect == "postgres")


def seal_after(
    cur: Any, store: EventStore, head: tuple[int, str], batch: int, at_once: bool = False
) -> int:
    """Seal up to `batch` events after `head` (position, digest); `at_once`: in one statement
    over arrays (PostgreSQL), not one per event.

    Another sealer (the audit role, `audit verify`, a second process) may have read the same
    head and sealed the same rows first. Its digests are the same, since a link depends only
    on the events, so a row already there is left as it is rather than failing the batch."""
    position, previous = head
    notifications = store.recorder.select_notifications(start=position + 1, limit=batch)
    rows = []
    for notification in notifications:
        previous = link(previous, notification)
        rows.append((notification.id, previous))
    insert = f"INSERT INTO {TABLE} (notification_id, digest)"
    if at_once and len(rows) >= AT_ONCE_FROM:
        ids, digests = zip(*rows, strict=True)
        cur.execute(
            f"{insert} SELECT * FROM unnest(?::bigint[], ?::text[]) "
            "ON CONFLICT (notification_id) DO NOTHING",
            (list(ids), list(digests)),
        )
    else:
        for row in rows:
            cur.execute(f"{insert} VALUES (?, ?) ON CONFLICT (notification_id) DO NOTHING", row)
    return len(notifications)


def extend_all(store: EventStore, db: Database) -> int:
    total = 0
    while added := extend(store, db):
        total += added
    return total


@dataclass(frozen=True)
class ChainReport:
    intact: bool
    checked: int
    sealed_through: int
    problem: str = ""  # "changed", "deleted" or "inserted"
    first_bad_position: int = 0

    def as_json(self) -> dict[str, Any]:
        report: dict[str, Any] = {
            "intact": self.intact,
            "checked": self.checked,
            "sealed_through": self.sealed_through,
        }
        if not self.intact:
            report["problem"] = self.problem
            report["first_bad_position"] = self.first_bad_position
        return report


def _entries(db: Database, batch: int = 1000) -> Iterator[tuple[int, str]]:
    after = 0
    while True:
        with db.read() as cur:
            rows = cur.execute(
                f"SELECT notification_id, digest FROM {TABLE} WHERE notification_id > ? "
                "ORDER BY notification_id LIMIT ?",
                (after, batch),
            ).fetchall()
        if not rows:
            return
        for row in rows:
            yield int(row["notification_id"]), str(row["digest"])
        after = int(rows[-1]["notification_id"])


def _stored(store: EventStore, stop: int) -> Iterator[Notification]:
    for notifications in read_notifications(store, 0, stop=stop):
        yield from notifications


def verify(store: EventStore, db: Database) -> ChainReport:
    """Recompute the chain from the stored events, in constant memory."""
    with db.read() as cur:
        sealed_through, _ = chain_head(cur)
    stored = _stored(store, sealed_through)
    previous, checked = GENESIS, 0
    for position, digest in _entries(db):
        if position > sealed_through:
            break
        notification = next(stored, None)
        if notification is None or notification.id > position:
            return ChainReport(False, checked, sealed_through, "deleted", position)
        if notification.id < position:
            return ChainReport(False, checked, sealed_through, "inserted", notification.id)
        previous = link(previous, notification)
        if previous != digest:
            return ChainReport(False, checked, sealed_through, "changed", position)
        checked += 1
    extra = next(stored, None)
    if extra is not None:
        return ChainReport(False, checked, sealed_through, "inserted", extra.id)
    return ChainReport(True, checked, sealed_through)


class ChainFollower:
    """Keeps the chain current in the background, sealing what was stored each interval.

    It does not wake on every save: sealing a batch per interval costs one transaction where
    sealing each save as it comes cost one per order, and the seal has no reader in a hurry
    (`audit verify` seals what is left before it answers)."""

    def __init__(self, store: EventStore, db: Database, poll_interval: float = 0.5) -> None:
        self.store = store
        self.db = db
        self.poll_interval = poll_interval
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        ensure_chain_table(db)

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="audit-chain", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                added = extend(self.store, self.db)
            except Exception:  # another process sealed the same rows first, or the db blipped
                log.warning("audit chain: batch not sealed; retrying", exc_info=True)
                added = 0
                self._stop.wait(self.poll_interval)
            # A batch short of full read the log to its end: reading again at once would
            # nearly always find nothing.
            if added < BATCH:
                self._wake.wait(self.poll_interval)
                self._wake.clear()


def verify_and_seal(store: EventStore, db: Database) -> ChainReport:
    """Verify what is sealed; if it is intact, seal the events stored since, so a run of
    `audit verify` anchors the history even where no follower runs."""
    ensure_chain_table(db)
    report = verify(store, db)
    if not report.intact:
        return report
    extend_all(store, db)
    with db.read() as cur:
        head, _ = chain_head(cur)
    return ChainReport(True, report.checked, head)
