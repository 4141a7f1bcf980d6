"""A gateway of its own learns the read models' position as they commit it (read-your-writes)."""

from __future__ import annotations

import time
import uuid

import pytest
from conftest import PG_URL, _reachable, drop_schema, require

from infra.database import PostgresDatabase
from projections.position_watch import (
    ListeningPositionWatch,
    PositionWatch,
    announce_position,
    position_channel,
)


def test_on_postgresql_the_position_comes_with_each_commit_not_from_polls() -> None:
    require("PostgreSQL", _reachable("127.0.0.1", 5432))
    schema = f"t_{uuid.uuid4().hex[:12]}"
    db = PostgresDatabase(PG_URL, schema)
    reads: list[int] = []

    def read_position() -> int:
        reads.append(1)
        return 3

    channel = position_channel(schema)
    watch = ListeningPositionWatch(read_position, PG_URL, channel)
    try:
        assert watch.wait_for(3, timeout=5.0, stalled_after=5.0)  # listening, then read once
        with pytest.raises(RuntimeError), db.transaction() as cur:
            announce_position(cur, channel, 9)
            raise RuntimeError("rolled back: nothing committed, nothing announced")
        assert not watch.wait_for(9, timeout=0.3, stalled_after=5.0)
        with db.transaction() as cur:
            announce_position(cur, channel, 7)
        started = time.monotonic()
        assert watch.wait_for(7, timeout=5.0, stalled_after=5.0)
        assert time.monotonic() - started < 1.0
        with db.transaction() as cur:  # another deployment's schema: another channel
            announce_position(cur, position_channel(f"{schema}_other"), 20)
        assert not watch.wait_for(20, timeout=0.3, stalled_after=5.0)
        assert len(reads) == 1
    finally:
        watch.close()
        db.close()
        drop_schema(schema)


def test_a_position_that_stands_still_ends_the_wait_early() -> None:
    """The process applying the read models is down: a write answers once the position stood
    still for `stalled_after`, not after the whole timeout."""
    watch = PositionWatch(lambda: 1, poll_seconds=0.01)
    try:
        started = time.monotonic()
        assert not watch.wait_for(2, timeout=10.0, stalled_after=0.3)
        assert time.monotonic() - started < 2.0
    finally:
        watch.close()


def test_a_schema_name_of_any_length_gives_a_channel_postgresql_takes() -> None:
    assert position_channel("t_abc") == "t_abc_read_models"
    long = position_channel("s" * 60)
    assert len(long.encode()) <= 63
    assert long != position_channel("s" * 61)


def test_without_notifications_a_waiting_request_still_sees_the_position_move() -> None:
    """A projections process that does not announce (an older release) or a listen connection
    that died silently: the watch reads the position itself while requests wait."""
    require("PostgreSQL", _reachable("127.0.0.1", 5432))
    position = [3]
    watch = ListeningPositionWatch(lambda: position[0], PG_URL, position_channel("t_silent"))
    try:
        assert watch.wait_for(3, timeout=5.0, stalled_after=5.0)
        position[0] = 5  # committed, never announced
        assert watch.wait_for(5, timeout=5.0, stalled_after=5.0)
    finally:
        watch.close()
