"""Keeps SQLite's write-ahead logs small.

SQLite checkpoints a WAL back into its database as it goes, but only rewinds the file, never
shrinks it: each one stayed at about 4 MB however small its database (3.8 MB beside a 12 KB
rate database), disk a full disk could not spare. `journal_size_limit` has our own
connections cut a WAL back when they reset it; the eventsourcing library's connections do not
set it, so a thread also truncates every WAL in the data dir now and then.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

log = logging.getLogger(__name__)

# What a WAL may keep after a reset: a few hundred pages, so the next commits reuse them.
JOURNAL_SIZE_LIMIT_BYTES = 1024 * 1024
CHECKPOINT_EVERY_SECONDS = 30.0


def truncate_wals(data_dir: Path) -> dict[str, int]:
    """`PRAGMA wal_checkpoint(TRUNCATE)` on every SQLite database in `data_dir` that has a WAL;
    returns each WAL's size afterwards. A database busy at that moment (a reader on an older
    snapshot, a writer) is skipped without waiting: it is done next time."""
    sizes: dict[str, int] = {}
    for wal in sorted(data_dir.glob("*.sqlite-wal")):
        database = wal.with_name(wal.name.removesuffix("-wal"))
        try:
            conn = sqlite3.connect(database, timeout=0, isolation_level=None)
            try:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            finally:
                conn.close()
            sizes[database.name] = wal.stat().st_size if wal.exists() else 0
        except (sqlite3.Error, OSError) as exc:
            log.debug("WAL checkpoint of %s skipped: %s", database, exc)
    return sizes


class WalCheckpointer:
    """`truncate_wals` every `every` seconds on a thread of its own, while started."""

    def __init__(self, data_dir: Path, every: float = CHECKPOINT_EVERY_SECONDS) -> None:
        self.data_dir = data_dir
        self.every = every
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="wal-checkpoints", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopping.wait(self.every):
            truncate_wals(self.data_dir)

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
