"""How often a follower reads the log: once per batch, with no read of nothing after a batch
that already read to the end, and never missing a commit that lands during a batch."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from eventsourcing.domain import Aggregate

from infra.database import Database
from infra.settings import Settings
from infra.store import EventStore, eventstore_env
from projections.follower import Follower
from runtime.container import build_databases


class Mark(Aggregate):
    def __init__(self, label: str) -> None:
        self.label = label


@pytest.fixture
def store_and_db(settings: Settings) -> Iterator[tuple[EventStore, Database]]:
    if settings.database_url:
        with psycopg.connect(settings.database_url, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{settings.database_schema}"')
    store = EventStore(eventstore_env(settings))
    db = build_databases(settings)[0]
    yield store, db
    db.close()
    store.close()


def counting_reads(follower: Follower) -> list[int]:
    reads: list[int] = []
    select = follower.select

    def counted(after: int) -> Any:
        reads.append(after)
        return select(after)

    follower.select = counted  # type: ignore[method-assign]
    return reads


def test_catch_up_reads_once_when_the_batch_was_not_full(
    store_and_db: tuple[EventStore, Database],
) -> None:
    store, db = store_and_db
    applied: list[int] = []
    follower = Follower(store, db, "reads", lambda _c, _e, n: applied.append(n), batch_size=10)
    reads = counting_reads(follower)
    for number in range(3):
        store.save(Mark(f"m{number}"))
    follower.catch_up()
    assert (len(applied), len(reads)) == (3, 1)

    reads.clear()
    for number in range(25):
        store.save(Mark(f"n{number}"))
    follower.catch_up()
    # Two full batches read on; the third, partial, ends the catch-up.
    assert (len(applied), len(reads)) == (28, 3)


def test_a_commit_during_a_batch_is_applied_without_waiting_for_the_poll(
    store_and_db: tuple[EventStore, Database],
) -> None:
    store, db = store_and_db
    applied: list[str] = []
    done = threading.Event()

    def handle(_cur: Any, event: Any, _position: int) -> None:
        label = getattr(event, "label", "")
        applied.append(label)
        if label == "first":
            store.save(Mark("during"))  # commits while this batch is still being applied
        if label == "during":
            done.set()

    follower = Follower(store, db, "during", handle, poll_interval=30.0)
    follower.start()
    try:
        time.sleep(0.2)  # the follower is waiting now, for a wake-up or its 30 s poll
        store.save(Mark("first"))
        assert done.wait(5.0), applied
    finally:
        follower.stop()
    assert applied == ["first", "during"]
