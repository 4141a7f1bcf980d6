"""`EventStore.at_version` in a process other than the save's: rebuilt from the stored events a
follower of that process read, equal to what the store gives, within a bounded memory."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from test_store_ordering import Tally

import infra.store
from infra.settings import Settings
from infra.store import EventStore, eventstore_env


@pytest.fixture
def two_stores(settings: Settings) -> Iterator[tuple[EventStore, EventStore]]:
    """Two stores on one log: the saving process's and a follower's."""
    if settings.database_url:
        with psycopg.connect(settings.database_url, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{settings.database_schema}"')
    saving, following = EventStore(eventstore_env(settings)), EventStore(eventstore_env(settings))
    yield saving, following
    saving.close()
    following.close()


def counting_store_reads(store: EventStore) -> list[Any]:
    reads: list[Any] = []
    get = store.repository.get

    def counted(*args: Any, **kwargs: Any) -> Any:
        reads.append(args)
        return get(*args, **kwargs)

    store.repository.get = counted  # type: ignore[method-assign]
    return reads


def follow(store: EventStore) -> None:
    store.remember_stored(store.recorder.select_notifications(start=1, limit=1000))


def test_versions_rebuilt_from_what_a_follower_read(two_stores: tuple[EventStore, EventStore]
                                                    ) -> None:
    saving, following = two_stores
    first = Tally(0)
    saving.save(first)
    following.at_version(first.id, 1)  # the follower's process asks at_version: it remembers
    tally = Tally(10)
    tally.count_up()
    tally.count_up()
    saving.save(tally)
    follow(following)
    reads = counting_store_reads(following)
    rebuilt = [following.at_version(tally.id, version).count for version in (1, 2, 3)]
    assert rebuilt == [10, 11, 12]
    assert reads == []  # none read back from the store
    assert [saving.repository.get(tally.id, version=v).count for v in (1, 2, 3)] == rebuilt


def test_a_follower_without_the_first_events_reads_the_store(
        two_stores: tuple[EventStore, EventStore]) -> None:
    saving, following = two_stores
    tally = Tally(5)
    saving.save(tally)
    following.at_version(tally.id, 1)
    tally.count_up()
    saving.save(tally)
    # Only the second event reached this follower: nothing to rebuild from, the store answers.
    following.remember_stored(saving.recorder.select_notifications(start=2, limit=10))
    assert following.at_version(tally.id, 2).count == 6


def test_the_events_kept_are_bounded(two_stores: tuple[EventStore, EventStore],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(infra.store, "HISTORIES_EVENTS_KEPT", 5)
    saving, following = two_stores
    tallies = [Tally(n) for n in range(8)]
    saving.save(*tallies)
    following.at_version(tallies[0].id, 1)
    follow(following)
    kept = following._histories
    assert len(kept) == 5 and following._history_events == 5
    assert list(kept) == [t.id for t in tallies[3:]]  # the oldest went first
    assert following.at_version(tallies[0].id, 1).count == 0  # from the store
