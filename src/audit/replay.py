"""Rebuild every read model from the event history into a fresh store and compare it, table by
table, with the live read models.

The fresh store is a scratch SQLite file whatever the live store's kind (read-model SQL runs
unchanged on both; booleans, the one type they return differently, are compared as 0/1): a
throwaway file needs no journal and no fsync, and handlers that read back never wait on a
server. It is deleted afterwards. Events stream in batches (`audit.stored_rows`), the next read
while one is applied; only events some read model handles are decoded (`infra.event_decoding`);
writes go out together per table (`projections.batched_writes`, as the live read models send
them), and read models may hold rows back to the end of a batch (`ReadModel.replaying`). Rows are compared through digests, so
memory stays flat however long the history is.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty, Full, Queue
from typing import Any

from eventsourcing.utils import resolve_topic

from audit.forked_replay import can_fork, replay_forked
from audit.stored_rows import read_rows
from infra.database import Database, SQLiteDatabase
from infra.settings import Settings
from infra.store import EventStore
from projections.base import ReadModel
from projections.batched_writes import BatchedWrites
from projections.follower import position_in, tracked_position
from projections.runner import READ_MODELS_TRACKING, ReadModels

Progress = Callable[[int, int], None]
Handler = Callable[[Any, Any, int], None]
SAMPLES = 5
SCRATCH_PREFIX = "partner-api-replay-"  # then the replaying process's pid
SCRATCH_IDLE = 600.0  # seconds without a write before an abandoned scratch dir is removed
BATCH = 5000  # notifications per read and per transaction of the fresh store
READ_AHEAD = 2  # batches read ahead of the one being applied: bounds memory


@dataclass
class TableComparison:
    table: str
    live_rows: int
    replayed_rows: int
    only_live: list[str] = field(default_factory=list)
    only_replayed: list[str] = field(default_factory=list)
    differing_rows: int = 0

    @property
    def identical(self) -> bool:
        return self.differing_rows == 0

    def as_json(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "identical": self.identical,
            "live_rows": self.live_rows,
            "replayed_rows": self.replayed_rows,
            "differing_rows": self.differing_rows,
            "only_live": self.only_live,
            "only_replayed": self.only_replayed,
        }


@dataclass
class ReplayReport:
    position: int
    events: int
    seconds: float
    tables: list[TableComparison]
    processes: int = 1

    @property
    def identical(self) -> bool:
        return all(table.identical for table in self.tables)

    def as_json(self) -> dict[str, Any]:
        return {
            "identical": self.identical,
            "position": self.position,
            "events": self.events,
            "seconds": round(self.seconds, 3),
            "events_per_second": round(self.events / self.seconds) if self.seconds else 0,
            "processes": self.processes,
            "tables": [table.as_json() for table in self.tables],
        }


@contextlib.contextmanager
def fresh_database(settings: Settings) -> Iterator[Database]:
    """A scratch SQLite file, removed on exit (on disk, not in memory: its size grows with the
    history)."""
    _remove_abandoned_scratch()
    scratch = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-"))
    # Scratch data: nothing is lost by skipping fsync and the journal, and the rebuild runs faster.
    sqlite = SQLiteDatabase(scratch / "replay.sqlite", durable=False, journal_mode="OFF")
    try:
        yield sqlite
    finally:
        sqlite.close()
        shutil.rmtree(scratch, ignore_errors=True)


def _remove_abandoned_scratch() -> None:
    """Scratch left by a replay whose process was killed (its `finally` never ran)."""
    for path in Path(tempfile.gettempdir()).glob(f"{SCRATCH_PREFIX}*-*"):
        owner = path.name[len(SCRATCH_PREFIX):].split("-", 1)[0]
        # Its process is gone, and nothing wrote there for a while (a replay in another PID
        # namespace sharing this temp dir writes constantly).
        idle = time.time() - max((p.stat().st_mtime for p in path.iterdir()), default=0.0)
        if owner.isdigit() and not Path(f"/proc/{owner}").exists() and idle > SCRATCH_IDLE:
            shutil.rmtree(path, ignore_errors=True)


class Replay:
    def __init__(
        self, store: EventStore, live: ReadModels, target: Database, *, fork: bool = True
    ) -> None:
        self.store = store
        self.live = live
        self.target = target
        self.fork = fork  # whether a first pass may run in forked processes (forked_replay)
        self.topics: list[str] | None = None  # read only these, when set
        self.processes = 1  # how many processes applied the models (forked_replay)
        self.models: list[ReadModel] = [type(model)() for model in live.models]
        for model in self.models:
            model.attach(store)
            model.replaying()
        with target.transaction() as cur:
            for model in self.models:
                model.create_tables(cur)
        self.position = 0
        self.events = 0
        self._handlers: dict[str, list[Handler]] = {}

    def handlers(self, topic: str) -> list[Handler]:
        """The read models' handlers for events of this topic; empty if none handles them."""
        found = self._handlers.get(topic)
        if found is None:
            name = resolve_topic(topic).__qualname__
            found = [h for model in self.models if (h := model.handler(name)) is not None]
            self._handlers[topic] = found
        return found

    def advance(self, stop: int, progress: Progress | None = None) -> None:
        with _earlier_objects_frozen():
            if self.fork and self.position == 0 and stop > 0 and can_fork(self.target):
                assert isinstance(self.target, SQLiteDatabase)
                self.events, self.processes = replay_forked(
                    self.store, self.models, self.target, stop, progress
                )
                self.position = stop
            else:
                self._advance(stop, progress)

    def _advance(self, stop: int, progress: Progress | None) -> None:
        to_domain_event = self.store.mapper.to_domain_event
        known = self._handlers
        for notifications in read_ahead(self.store, self.position, stop, self.topics):
            with self.target.bulk_transaction() as cur:
                writes = BatchedWrites(cur)
                for notification in notifications:
                    handlers = known.get(notification.topic)
                    if handlers is None:
                        handlers = self.handlers(notification.topic)
                    if not handlers:
                        continue  # not decoded: no read model would look at it
                    event = to_domain_event(notification)
                    for apply in handlers:
                        apply(writes, event, notification.id)
                for model in self.models:
                    model.write_held(writes)
                writes.flush()
            self.position = notifications[-1].id
            self.events += len(notifications)
            if progress is not None:
                progress(self.position, stop)
        self.position = max(self.position, stop)

    def compare(self, live: Any | None = None) -> list[TableComparison]:
        """Each live table against the replay; `live`: a snapshot cursor to read them from."""
        if live is None:
            with self.live.db.read() as cur:
                return self.compare(cur)
        return [compare_table(table, live, self.target) for table in self.live.tables()]


@contextlib.contextmanager
def _earlier_objects_frozen() -> Iterator[None]:
    """Objects alive before the replay stay out of garbage collection while it runs: the
    collections its allocations trigger would otherwise walk every module's objects over and
    over (a twentieth of a replay). `gc.unfreeze` hands them back to the collector."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def read_ahead(
    store: EventStore, after: int, stop: int, topics: list[str] | None = None
) -> Iterator[Sequence[Any]]:
    """`read_rows`, with the next batches read in a thread while one is applied (a read is
    mostly waiting on the store), at most READ_AHEAD of them held."""
    batches: Queue[Sequence[Any] | BaseException | None] = Queue(maxsize=READ_AHEAD)
    closed = threading.Event()

    def offer(item: Sequence[Any] | BaseException | None) -> bool:
        while not closed.is_set():
            try:
                batches.put(item, timeout=0.1)
                return True
            except Full:
                continue
        return False

    def read() -> None:
        try:
            for notifications in read_rows(store, after, stop, BATCH, topics):
                if not offer(notifications):
                    return
            offer(None)
        except BaseException as error:  # handed to the reading side, raised there
            offer(error)

    reader = threading.Thread(target=read, name="audit-replay-read", daemon=True)
    reader.start()
    try:
        while (item := batches.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        closed.set()
        with contextlib.suppress(Empty):
            batches.get_nowait()  # unblock a reader waiting to put
        reader.join()


def replay(
    settings: Settings, store: EventStore, live: ReadModels, progress: Progress | None = None
) -> ReplayReport:
    """Replay up to the live read models' position and compare. The live side is read in one
    snapshot, with the position it holds: the read models commit their rows and position
    together, so the two sides are compared at one position however busy the service is."""
    started = time.perf_counter()
    with fresh_database(settings) as target:
        rebuild = Replay(store, live, target)
        # The bulk first, outside the snapshot: a long-held one keeps SQLite from checkpointing
        # and PostgreSQL from vacuuming. Then only what committed meanwhile, inside it.
        rebuild.advance(tracked_position(live.db, READ_MODELS_TRACKING), progress)
        with live.db.snapshot() as moment:
            position = position_in(moment, READ_MODELS_TRACKING)
            rebuild.advance(position, progress)
            tables = rebuild.compare(moment)
        seconds = time.perf_counter() - started
        return ReplayReport(position, rebuild.events, seconds, tables, rebuild.processes)


def _rows(db: Database, table: str) -> Iterator[tuple[bytes, dict[str, Any]]]:
    with db.read() as cur:
        yield from _rows_of(cur, table)


def _rows_of(cur: Any, table: str) -> Iterator[tuple[bytes, dict[str, Any]]]:
    cur.execute(f"SELECT * FROM {table}")
    while (row := cur.fetchone()) is not None:
        # PostgreSQL returns BOOLEAN columns as bool, the SQLite replay as 0/1.
        same = {name: int(v) if isinstance(v, bool) else v for name, v in row.items()}
        canonical = json.dumps(same, sort_keys=True, default=str, separators=(",", ":"))
        yield hashlib.blake2b(canonical.encode(), digest_size=16).digest(), row


def _sample(row: dict[str, Any]) -> str:
    return json.dumps(row, sort_keys=True, default=str)


def compare_table(table: str, live: Any, replayed: Database) -> TableComparison:
    """Multiset comparison of rows: the order rows were written in does not matter. `live` is
    a cursor (a snapshot's)."""
    expected: Counter[bytes] = Counter()
    live_rows = 0
    for digest, _ in _rows_of(live, table):
        expected[digest] += 1
        live_rows += 1
    result = TableComparison(table, live_rows, 0)
    for digest, row in _rows(replayed, table):
        result.replayed_rows += 1
        if expected[digest] > 0:
            expected[digest] -= 1
            continue
        result.differing_rows += 1
        if len(result.only_replayed) < SAMPLES:
            result.only_replayed.append(_sample(row))
    missing = +expected  # rows of the live table the replay did not produce
    result.differing_rows += sum(missing.values())
    if missing:
        for digest, row in _rows_of(live, table):
            if missing[digest] > 0 and len(result.only_live) < SAMPLES:
                missing[digest] -= 1
                result.only_live.append(_sample(row))
    return result
