"""A replay's first pass split across two forked processes.

Each child applies a share of the read models (balanced by `ReadModel.replay_weight`) into a
scratch file of its own, reading every event and decoding only those its models handle; the parent
then copies their rows into the fresh store, where the comparison and any catch-up run as
usual. Two processes use two cores where one is bound by the interpreter lock.

Only a process running no other thread than connection-pool workers forks: a lock another
thread held at the fork would stay held in the child. The CLI's `audit replay` and the bench
qualify; a server process (its event loop, gRPC and follower threads) replays in one process.
"""

from __future__ import annotations

import mmap
import os
import re
import signal
import struct
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from audit.stored_rows import count_rows, stored_topics
from infra.database import Database, SQLiteDatabase
from infra.parent_death import die_with_parent
from infra.store import EventStore
from projections.base import ReadModel

Progress = Callable[[int, int], None]
WORKERS = 2
_SLOT = struct.Struct("qq")  # per child: position reached, events read


class _Models:
    """What a Replay needs of the live read models: their instances."""

    def __init__(self, models: list[ReadModel]) -> None:
        self.models = models


# psycopg_pool's scheduler and workers: idle between tasks on queues of their own pool, which
# a child never touches (it opens its own connections).
_POOL_THREAD = re.compile(r"pool-\d+-(scheduler|worker-\d+)")


def can_fork(target: Database) -> bool:
    """Whether this process may fork for a replay: it runs no thread but the main one and
    connection-pool threads, so no lock a child needs can be held at the fork."""
    if not hasattr(os, "fork") or not isinstance(target, SQLiteDatabase):
        return False
    main = threading.main_thread()
    return threading.current_thread() is main and all(
        thread is main or _POOL_THREAD.fullmatch(thread.name) for thread in threading.enumerate()
    )


def split(models: list[ReadModel], parts: int = WORKERS) -> list[list[ReadModel]]:
    """Heaviest first, each to the lightest group so far."""
    groups: list[list[ReadModel]] = [[] for _ in range(parts)]
    loads = [0] * parts
    for model in sorted(models, key=lambda m: -m.replay_weight):
        lightest = loads.index(min(loads))
        groups[lightest].append(model)
        loads[lightest] += model.replay_weight
    return [group for group in groups if group]


def replay_forked(
    store: EventStore,
    models: list[ReadModel],
    target: SQLiteDatabase,
    stop: int,
    progress: Progress | None,
) -> tuple[int, int]:
    """Replay every model up to `stop` in child processes and copy their rows into `target`
    (whose tables exist and are empty); returns how many notifications there were up to
    `stop`, and how many processes applied them."""
    from audit.replay import Replay  # the children run the ordinary replay

    groups = split(models)
    shared = mmap.mmap(-1, _SLOT.size * len(groups))
    parts = [target.path.with_name(f"{target.path.stem}-part{n}.sqlite") for n in range(len(groups))]
    children = []
    parent = os.getpid()
    for number, (group, path) in enumerate(zip(groups, parts, strict=True)):
        pid = os.fork()
        if pid == 0:  # the child: never returns
            # Its SQLite locks are the parent's (SQLite's lock state is copied by the fork, the
            # locks themselves are not): it must not read on after the parent is gone.
            die_with_parent(parent, signal.SIGKILL)
            _child(Replay, store.env, group, path, stop, shared, number)
        children.append(pid)
    try:
        _wait(children, shared, len(groups), stop, progress)
        for group, path in zip(groups, parts, strict=True):
            _copy_rows(target, path, [table for model in group for table in model.tables])
    finally:
        for path in parts:
            path.unlink(missing_ok=True)
    counted = count_rows(store, stop)  # the children read only their models' events
    if counted is None:
        counted = max(_SLOT.unpack_from(shared, n * _SLOT.size)[1] for n in range(len(groups)))
    return int(counted), len(groups)


def _child(
    replay_cls: Any, env: dict[str, str], group: list[ReadModel], path: Path, stop: int,
    shared: mmap.mmap, number: int,
) -> None:
    status = 1
    try:
        # Connections of its own (the parent's stay the parent's); the tables exist already, and
        # two children creating them at once on PostgreSQL would collide.
        store = EventStore({**env, "CREATE_TABLE": "false"})
        part = SQLiteDatabase(path, durable=False, journal_mode="OFF")
        replay = replay_cls(store, _Models(group), part, fork=False)
        found = stored_topics(store, stop)
        if found is not None:  # read only the events this child's models handle
            replay.topics = [topic for topic in found if replay.handlers(topic)]

        def reached(position: int, _end: int) -> None:
            _SLOT.pack_into(shared, number * _SLOT.size, position, replay.events)

        replay.advance(stop, reached)
        _SLOT.pack_into(shared, number * _SLOT.size, stop, replay.events)
        part.close()
        store.close()
        status = 0
    except BaseException:
        traceback.print_exc()
    finally:
        os._exit(status)  # no atexit or finalizer of the parent's objects runs here


def _wait(
    children: list[int], shared: mmap.mmap, count: int, stop: int, progress: Progress | None
) -> None:
    failed = False
    waiting = set(children)
    while waiting:
        for pid in list(waiting):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                waiting.discard(pid)
                failed = failed or os.waitstatus_to_exitcode(status) != 0
        if progress is not None:
            reached = min(_SLOT.unpack_from(shared, n * _SLOT.size)[0] for n in range(count))
            progress(reached, stop)
        if waiting:
            time.sleep(0.02)
    if failed:
        raise RuntimeError("a replay worker process failed (its traceback is on stderr)")


def _copy_rows(target: SQLiteDatabase, path: Path, tables: list[str]) -> None:
    target.statement("ATTACH DATABASE ? AS part", (str(path),))
    try:
        with target.transaction() as cur:
            for table in tables:
                cur.execute(f"INSERT INTO main.{table} SELECT * FROM part.{table}")
    finally:
        target.statement("DETACH DATABASE part")
