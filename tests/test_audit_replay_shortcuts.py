"""The replay's shortcuts leave nothing different: events decoded without eventsourcing's
mapper, rows read without `Notification`s, catalog rows held back until the end of a batch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from audit_support import build_history
from conftest import RunningService
from eventsourcing.persistence import Mapper

from audit.records import read_notifications
from audit.replay import Replay, fresh_database
from audit.stored_rows import read_rows
from infra.database import SQLiteDatabase
from infra.event_decoding import DecodingMapper, EventDecoder
from projections.batched_writes import BatchedWrites
from projections.catalog_rows import LiveRows, ReplayRows


def _same_event(expected: Any, decoded: Any) -> None:
    assert type(decoded) is type(expected)
    assert list(vars(decoded)) == list(vars(expected))
    for name, value in vars(expected).items():
        assert type(vars(decoded)[name]) is type(value) and vars(decoded)[name] == value, name


def shipped(store: Any) -> Mapper[Any]:
    """eventsourcing's own mapper, with the store's transcodings."""
    return Mapper(transcoder=store.mapper.transcoder)


def test_decoded_events_and_rows_match_eventsourcings(service: RunningService) -> None:
    build_history(service)
    store = service.container.store
    assert isinstance(store.mapper, DecodingMapper)  # what every role decodes with
    decode = store.mapper.to_domain_event
    stop = store.recorder.max_notification_id()
    notifications = [n for batch in read_notifications(store, 0, stop=stop) for n in batch]
    rows = [r for batch in read_rows(store, 0, stop, batch=7) for r in batch]
    assert [r.id for r in rows] == [n.id for n in notifications]
    assert len(rows) > 10
    for notification, row in zip(notifications, rows, strict=True):
        assert (row.topic, row.originator_version, bytes(row.state)) == (
            notification.topic, notification.originator_version, bytes(notification.state)
        )
        expected = shipped(store).to_domain_event(notification)
        _same_event(expected, decode(notification))
        _same_event(expected, EventDecoder(shipped(store))(notification))
        _same_event(expected, decode(row))


@pytest.mark.parametrize("step", [1, 3])
def test_a_replay_in_small_batches_is_identical(service: RunningService, step: int) -> None:
    """Rows created in one batch and edited in a later one take the read-back paths."""
    build_history(service)
    c = service.container
    stop = c.store.recorder.max_notification_id()
    with fresh_database(c.settings) as target:
        rebuild = Replay(c.store, c.read_models, target)
        for position in range(step, stop + step, step):
            rebuild.advance(min(position, stop))
        tables = rebuild.compare()
    assert all(t.identical for t in tables), [t.as_json() for t in tables if not t.identical]


@pytest.mark.parametrize("capacity", [1, 100])
def test_held_rows_end_as_the_live_statements_leave_them(tmp_path: Path, capacity: int) -> None:
    ddl = "CREATE TABLE t (id TEXT PRIMARY KEY, status TEXT NOT NULL, doc TEXT NOT NULL)"
    live_db = SQLiteDatabase(tmp_path / "live.sqlite", durable=False)
    replay_db = SQLiteDatabase(tmp_path / "replay.sqlite", durable=False, journal_mode="OFF")
    live, held = LiveRows(), ReplayRows(capacity)

    def edits(rows: LiveRows | ReplayRows, cur: Any, batch: int) -> None:
        if batch == 0:
            for n in range(3):
                rows.insert(cur, "t", {"id": f"r{n}", "status": "new"}, {"n": n, "tags": []})
        for n in range(3):
            doc = rows.load(cur, "t", f"r{n}")
            doc["tags"].append(batch)
            if n == batch:
                rows.store(cur, "t", f"r{n}", doc, status=f"changed in {batch}")
            else:
                rows.store(cur, "t", f"r{n}", doc)

    for db, rows in ((live_db, live), (replay_db, held)):
        with db.transaction() as cur:
            cur.execute(ddl)
        for batch in range(3):
            with db.transaction() as cur:
                writes = BatchedWrites(cur) if rows is held else cur
                edits(rows, writes, batch)
                rows.write_held(writes)
                if isinstance(writes, BatchedWrites):
                    writes.flush()
    with live_db.read() as a, replay_db.read() as b:
        expected = a.execute("SELECT * FROM t ORDER BY id").fetchall()
        assert b.execute("SELECT * FROM t ORDER BY id").fetchall() == expected
    assert expected[1] == {"id": "r1", "status": "changed in 1", "doc": '{"n": 1, "tags": [0, 1, 2]}'}


@pytest.mark.parametrize(
    "extra",
    [
        '"note":"a\\"b\\u00e9\\n"',
        '"inner":{"deep":{"_type_":"uuid_hex","_data_":"4161a4a1d5cf42e0be35f436f3d6bdf6"}}',
        '"other_id":{"_type_":"uuid_hex","_data_":"4161a4a1d5cf42e0be35f436f3d6bdf6"}',
        '"word":"_type_"',
        '"x":NaN',
        '"y":1e400',
        '"z":{"_type_":"no_such_type","_data_":"1"}',
        '"w":{"_type_":"decimal_str","_data_":"1.50"}',
        '"class_version":1',
    ],
)
def test_unusual_stored_events_decode_as_eventsourcing_decodes_them(
    service: RunningService, extra: str
) -> None:
    service.new_org("Unusual")
    store = service.container.store
    notification = next(iter(read_notifications(store, 0, stop=1)))[0]
    state = b"{" + extra.encode() + b"," + bytes(notification.state)[1:]
    crafted = notification.__class__(
        id=notification.id, originator_id=notification.originator_id,
        originator_version=notification.originator_version, topic=notification.topic,
        state=state,
    )
    try:
        expected = shipped(store).to_domain_event(crafted)
    except Exception as error:
        with pytest.raises(type(error)):
            store.mapper.to_domain_event(crafted)
        return
    decoded = store.mapper.to_domain_event(crafted)
    if extra == '"x":NaN':  # NaN != NaN: compare the rest
        assert repr(vars(decoded)) == repr(vars(expected))
        return
    _same_event(expected, decoded)
