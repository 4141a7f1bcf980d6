"""The PostgreSQL recorder's reads, rendered once per shape, answer exactly what eventsourcing's
own statements answer, for every combination of their arguments."""

from __future__ import annotations

import itertools

import pytest
from eventsourcing.postgres import PostgresApplicationRecorder
from test_store_ordering import Tally, store  # noqa: F401 - the fixture

from infra.pg_recorder import OneStatementRecorder
from infra.store import EventStore

# SQLite's recorder is eventsourcing's as shipped.
pytestmark = pytest.mark.parametrize("store_kind", ["postgres"], indirect=True)


@pytest.fixture
def recorder(store: EventStore) -> OneStatementRecorder:  # noqa: F811 - the fixture
    assert isinstance(store.recorder, OneStatementRecorder)
    return store.recorder


def test_event_reads_match_eventsourcing(store: EventStore, recorder: OneStatementRecorder  # noqa: F811
                                         ) -> None:
    tally = Tally(0)
    for _ in range(5):
        tally.count_up()
    store.save(tally, Tally(7))
    shipped = PostgresApplicationRecorder.select_events
    shapes = itertools.product((None, 2), (None, 5), (False, True), (None, 2))
    for gt, lte, desc, limit in shapes:
        ours = recorder.select_events(tally.id, gt=gt, lte=lte, desc=desc, limit=limit)
        theirs = shipped(recorder, tally.id, gt=gt, lte=lte, desc=desc, limit=limit)
        assert ours == theirs, (gt, lte, desc, limit)
        assert ours  # every shape finds some of the six events
    assert recorder.select_events(tally.id, gt=6) == []


def test_notification_reads_match_eventsourcing(
    store: EventStore, recorder: OneStatementRecorder  # noqa: F811
) -> None:
    first, second = Tally(0), Tally(1)
    first.count_up()
    second.count_up()
    store.save(first, second)
    counted = f"{Tally.__module__}:Tally.Counted"
    shipped = PostgresApplicationRecorder.select_notifications
    shapes = itertools.product((None, 2), (None, 3), ((), (counted,)), (True, False))
    for start, stop, topics, inclusive in shapes:
        arguments = {"stop": stop, "topics": topics, "inclusive_of_start": inclusive}
        ours = recorder.select_notifications(start, 10, **arguments)
        theirs = shipped(recorder, start, 10, **arguments)
        assert ours == theirs, (start, stop, topics, inclusive)
    assert [n.topic for n in recorder.select_notifications(1, 10, topics=[counted])] == [
        counted,
        counted,
    ]
    assert len(recorder.select_notifications(2, 1)) == 1
