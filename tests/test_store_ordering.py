"""The event store's notification log under concurrent saves, on both stores.

Followers (read models, outbox, fulfillment) read the log after their position and never look
back: an id that became visible after a higher one would be skipped for good. On PostgreSQL
each save is one call of a server-side function that takes the table lock before any id is
issued (`infra/pg_recorder.py`), so ids must appear in order with no gap filled later.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from conftest import PG_URL, _reachable, drop_schema, make_env, require
from eventsourcing.domain import Aggregate, event
from eventsourcing.persistence import IntegrityError, OperationalError

from infra.pg_recorder import OneStatementRecorder
from infra.settings import Settings
from infra.store import EventStore, eventstore_env

WRITERS = 4
SAVES_EACH = 40


class Tally(Aggregate):
    def __init__(self, count: int) -> None:
        self.count = count

    @event("Counted")
    def count_up(self) -> None:
        self.count += 1


@pytest.fixture
def store(settings: Settings) -> Iterator[EventStore]:
    if settings.database_url:
        with psycopg.connect(settings.database_url, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{settings.database_schema}"')
    opened = EventStore(eventstore_env(settings))
    yield opened
    opened.close()


def test_concurrent_saves_become_visible_in_id_order(store: EventStore) -> None:
    def write() -> None:
        for _ in range(SAVES_EACH):
            tally = Tally(0)
            tally.count_up()
            store.save(tally)

    writers = [threading.Thread(target=write) for _ in range(WRITERS)]
    for writer in writers:
        writer.start()
    seen, expected_total = 0, WRITERS * SAVES_EACH * 2
    while seen < expected_total:
        for notification in store.recorder.select_notifications(start=seen + 1, limit=50):
            # A gap here would be an id a follower passes over and never reads.
            assert notification.id == seen + 1
            seen = notification.id
        if not any(writer.is_alive() for writer in writers):
            rest = store.recorder.select_notifications(start=seen + 1, limit=1000)
            assert [n.id for n in rest] == list(range(seen + 1, expected_total + 1))
            break
    for writer in writers:
        writer.join()


def test_a_stale_save_is_refused_and_records_nothing(store: EventStore) -> None:
    tally = Tally(0)
    store.save(tally)
    fresh, stale = store.get(tally.id), store.get(tally.id)
    fresh.count_up()
    store.save(fresh)
    stale.count_up()
    stale.count_up()
    before = store.recorder.max_notification_id()
    with pytest.raises(IntegrityError):
        store.save(stale)
    assert store.recorder.max_notification_id() == before
    assert store.get(tally.id).count == 1


def test_a_save_survives_a_dropped_connection(tmp_path: Path) -> None:
    """PostgreSQL: a pooled connection killed under the store (a database restart) is
    retried, as eventsourcing's own recorder does."""
    require("PostgreSQL", _reachable("127.0.0.1", 5432))
    env, schema = make_env(tmp_path, "postgres")
    settings = Settings.from_env(env)
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
    store = EventStore(eventstore_env(settings))
    try:
        store.save(Tally(0))
        with psycopg.connect(PG_URL, autocommit=True) as admin:
            killed = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE pid <> pg_backend_pid() AND query LIKE %s",
                (f'%"{schema}"%insert_in_order%',),
            ).fetchall()
        assert killed
        tally = Tally(1)
        store.save(tally)
        assert store.get(tally.id).count == 1
    finally:
        store.close()
        drop_schema(schema)


@contextmanager
def pg_store(tmp_path: Path, recorder: type) -> Iterator[EventStore]:
    """A PostgreSQL store of its own schema, saving through `recorder` (defined here)."""
    require("PostgreSQL", _reachable("127.0.0.1", 5432))
    env, schema = make_env(tmp_path, "postgres")
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
    store = EventStore({**eventstore_env(Settings.from_env(env)),
                        "APPLICATION_RECORDER_TOPIC": f"test_store_ordering:{recorder.__name__}"})
    try:
        yield store
    finally:
        store.close()
        drop_schema(schema)


class ReplyLostRecorder(OneStatementRecorder):
    """The server commits, then the connection drops before its answer arrives."""

    lose_next_reply = False

    def _insert(self, cursor: Any, rows: list[Any]) -> list[int]:
        ids = super()._insert(cursor, rows)
        if ReplyLostRecorder.lose_next_reply:
            ReplyLostRecorder.lose_next_reply = False
            raise OperationalError("server closed the connection unexpectedly")
        return ids


def test_a_save_whose_answer_was_lost_is_not_applied_twice(tmp_path: Path) -> None:
    """PostgreSQL: the retry after a dropped connection finds the events the first attempt
    committed and answers their ids, instead of meeting them as a conflict (which made the
    caller decide again on state that already held its first decision)."""
    with pg_store(tmp_path, ReplyLostRecorder) as store:
        assert isinstance(store.recorder, ReplyLostRecorder)
        tally = Tally(0)
        store.save(tally)
        tally.count_up()
        ReplyLostRecorder.lose_next_reply = True
        recordings = store.save(tally)
        assert not ReplyLostRecorder.lose_next_reply  # the reply was lost, then retried
        stored = store.recorder.select_events(tally.id)
        assert [e.originator_version for e in stored] == [1, 2]
        assert [r.notification.id for r in recordings] == [
            n.id for n in store.recorder.select_notifications(start=1, limit=10)
            if n.originator_id == tally.id and n.originator_version == 2
        ]
        assert store.get(tally.id).count == 1

        rival = store.get(tally.id)  # a real conflict is still one
        rival.count_up()
        tally.count_up()
        tally.count_up()
        store.save(tally)
        with pytest.raises(IntegrityError):
            store.save(rival)


class SlowCommitRecorder(OneStatementRecorder):
    """The client loses the connection while the server is still committing its insert."""

    lose_next = False

    def _insert(self, cursor: Any, rows: list[Any]) -> list[int]:
        if not SlowCommitRecorder.lose_next:
            return super()._insert(cursor, rows)
        SlowCommitRecorder.lose_next = False
        locked = threading.Event()

        def commit_slowly() -> None:
            with self.datastore.get_connection() as conn, conn.transaction(), \
                    conn.cursor() as other:
                super(SlowCommitRecorder, self)._insert(other, rows)  # holds the table lock
                locked.set()
                time.sleep(0.5)

        threading.Thread(target=commit_slowly, daemon=True).start()
        assert locked.wait(10)
        raise OperationalError("server closed the connection unexpectedly")


def test_a_save_lost_while_still_committing_is_not_applied_twice(tmp_path: Path) -> None:
    """PostgreSQL: the retry's lookup runs before the first attempt's commit lands; its insert
    then waits for that commit's lock, meets the rows as a conflict, and looks again."""
    with pg_store(tmp_path, SlowCommitRecorder) as store:
        tally = Tally(0)
        store.save(tally)
        tally.count_up()
        SlowCommitRecorder.lose_next = True
        store.save(tally)
        assert [e.originator_version for e in store.recorder.select_events(tally.id)] == [1, 2]
        assert store.get(tally.id).count == 1
