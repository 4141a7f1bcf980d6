"""Group commit (`infra/group_commit.py`): the saves of concurrent requests share a transaction,
yet each is saved or refused on its own, and notification ids stay unique and gap-free."""

from __future__ import annotations

import threading
from collections.abc import Callable

from eventsourcing.domain import Aggregate, event
from eventsourcing.persistence import RecordConflictError

from infra.group_commit import GroupCommit, Pending
from infra.settings import Settings
from runtime.container import Container


class Counter(Aggregate):
    def __init__(self) -> None:
        self.count = 0

    @event("Bumped")
    def bump(self) -> None:
        self.count += 1


def _at_once(count: int, work: Callable[[int], None]) -> None:
    start = threading.Barrier(count)

    def run(number: int) -> None:
        start.wait()
        work(number)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)


def test_concurrent_saves_all_land_with_gap_free_ids(settings: Settings) -> None:
    container = Container.build(settings)  # creates the PostgreSQL schema
    store = container.store
    try:
        saved: dict[int, Counter] = {}
        ids: list[int] = []

        def save(number: int) -> None:
            counter = Counter()
            counter.bump()
            recordings = store.save(counter)
            ids.extend(r.notification.id for r in recordings)
            saved[number] = counter

        _at_once(32, save)
        assert len(saved) == 32
        assert sorted(ids) == list(range(1, 65))
        for counter in saved.values():
            assert store.get(counter.id).count == 1
        ordered = store.recorder.select_notifications(start=1, limit=100)
        assert [n.id for n in ordered] == list(range(1, 65))
    finally:
        container.close()


def test_a_conflict_fails_only_its_own_save(settings: Settings) -> None:
    container = Container.build(settings)  # creates the PostgreSQL schema
    store = container.store
    try:
        shared = Counter()
        store.save(shared)
        outcomes: dict[int, str] = {}
        copies = {n: store.get(shared.id) for n in range(0, 24, 2)}  # all at version 1

        def save(number: int) -> None:
            if number % 2:  # unrelated saves, in the same batches
                store.save(Counter())
                outcomes[number] = "saved"
                return
            mine = copies[number]
            mine.bump()
            try:
                store.save(mine)
                outcomes[number] = "saved"
            except RecordConflictError:
                outcomes[number] = "conflict"

        _at_once(24, save)
        racing = [outcomes[n] for n in range(0, 24, 2)]
        assert racing.count("saved") == 1 and racing.count("conflict") == 11
        assert all(outcomes[n] == "saved" for n in range(1, 24, 2))
        assert store.get(shared.id).count == 1
    finally:
        container.close()


def test_saves_waiting_behind_a_commit_go_in_one_batch() -> None:
    """While one batch is written, the saves that arrive wait and go together in the next."""
    batches: list[list[int]] = []
    entered, release = threading.Event(), threading.Event()

    def write(batch: list[Pending[int, int]]) -> None:  # type: ignore[type-arg]
        batches.append([p.item for p in batch])
        if len(batches) == 1:
            entered.set()
            release.wait(10)
        for pending in batch:
            pending.settle(pending.item * 10)

    group: GroupCommit[int, int] = GroupCommit(write)
    results: dict[int, int | None] = {}
    first = threading.Thread(target=lambda: results.__setitem__(0, group.submit(0)))
    first.start()
    assert entered.wait(10)
    others = [threading.Thread(target=lambda n=n: results.__setitem__(n, group.submit(n)))
              for n in range(1, 6)]
    for thread in others:
        thread.start()
    while sum(len(b) for b in batches) < 1 or len(group._waiting) < 5:  # noqa: SLF001
        threading.Event().wait(0.01)
    release.set()
    for thread in [first, *others]:
        thread.join(10)
    assert batches[0] == [0] and sorted(batches[1]) == [1, 2, 3, 4, 5]
    assert results == {n: n * 10 for n in range(6)}
