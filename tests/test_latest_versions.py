"""The checks a request makes before it runs (its key, its sandbox clock) read in one statement:
`EventStore.latest_versions`, and the key check and clock offset built on it, on both stores."""

from __future__ import annotations

import time
import uuid

from test_store_ordering import Tally, store  # noqa: F401 - the fixture

from domain.sandbox_clocks import SandboxClock, sandbox_clock_id
from infra.clock import SystemClock
from infra.sandbox_offsets import SandboxOffsets
from infra.store import EventStore
from services.accounts.keys import Accounts


def test_latest_versions_are_each_aggregates_last(store: EventStore) -> None:  # noqa: F811
    counted, fresh, never_saved = Tally(0), Tally(1), uuid.uuid4()
    for _ in range(4):
        counted.count_up()
    store.save(counted, fresh)
    found = store.latest_versions([counted.id, fresh.id, never_saved])
    assert found == {counted.id: 5, fresh.id: 1}
    for tally in (counted, fresh):
        last = store.recorder.select_events(tally.id, desc=True, limit=1)
        assert found[tally.id] == last[0].originator_version
    assert store.latest_versions([never_saved]) == {}


def test_a_sandbox_key_check_reads_its_clock_version(store: EventStore) -> None:  # noqa: F811
    accounts = Accounts(store, SystemClock())
    org_id = str(accounts.create_organization("Acme")["id"])
    sandbox = accounts.create_key(org_id, "test", "full").secret
    live = accounts.create_key(org_id, "live", "full").secret

    first = accounts.check(sandbox)
    assert first is not None and first.clock_version is None  # loaded: not read yet
    cached = accounts.check(sandbox)
    assert cached is not None and cached.clock_version == 0  # never advanced
    clock = SandboxClock(org_id=org_id)
    clock.advance(3600.0, time.time())
    store.save(clock)
    moved = accounts.check(sandbox)
    assert moved is not None and moved.clock_version == 2
    assert moved.principal == first.principal

    accounts.check(live)
    checked_live = accounts.check(live)
    assert checked_live is not None and checked_live.clock_version is None  # no sandbox


def test_a_revoked_key_is_refused_by_the_next_check(store: EventStore) -> None:  # noqa: F811
    accounts = Accounts(store, SystemClock())
    org_id = str(accounts.create_organization("Acme")["id"])
    issued = accounts.create_key(org_id, "test", "full")
    assert accounts.check(issued.secret) is not None
    assert accounts.check(issued.secret) is not None  # now from the cache
    accounts.revoke_key(issued.id)
    assert accounts.check(issued.secret) is None


def test_the_offset_follows_the_clock_version_it_is_given(store: EventStore) -> None:  # noqa: F811
    offsets = SandboxOffsets(store)
    org_id = "org_0123456789abcdef0123456789abcdef"
    assert offsets(org_id, 0) == 0.0
    clock = SandboxClock(org_id=org_id)
    clock.advance(60.0, time.time())
    store.save(clock)
    # A version read before the advance: the offset as of that read.
    assert offsets(org_id, 0) == 0.0
    assert offsets(org_id, 2) == 60.0
    clock.advance(40.0, time.time())
    store.save(clock)
    assert offsets(org_id, 2) == 60.0
    assert offsets(org_id) == 100.0  # no version given: the store is asked
    assert store.latest_versions([sandbox_clock_id(org_id)]) == {sandbox_clock_id(org_id): 3}
