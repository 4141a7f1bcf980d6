"""The parts of health and self-healing that need no full service run: what counts as a full
disk, the rate bucket kept in memory while its store is full (on a real full tmpfs), the
outbox reported stuck, SQLite's WAL files truncated, and the embedded nats-server's supervisor
restarting a server whose JetStream cannot store."""

from __future__ import annotations

import errno
import sqlite3
import time
from pathlib import Path

import psycopg.errors
import pytest
from conftest import ServiceFactory, require_nats
from disk_full_support import fill, small_tmpfs
from eventsourcing.persistence import OperationalError
from webhook_receiver import wait_until

from infra import nats_server
from infra.clock import ManualClock
from infra.database import SQLiteDatabase
from infra.nats_probe import jetstream_cannot_store
from infra.rate_limit import RateLimiter
from infra.storage_health import room_to_write, storage_full
from infra.wal_checkpoints import WalCheckpointer, truncate_wals


def test_a_full_disk_is_recognised_however_it_is_wrapped() -> None:
    sqlite_full = sqlite3.OperationalError("database or disk is full")
    wrapped = OperationalError(sqlite_full)
    wrapped.__cause__ = sqlite_full
    assert storage_full(sqlite_full) and storage_full(wrapped)
    assert storage_full(psycopg.errors.DiskFull("could not extend file"))
    assert storage_full(OSError(errno.ENOSPC, "No space left on device"))
    first_connection = sqlite3.OperationalError("disk I/O error")  # no room for its WAL index
    first_connection.sqlite_errorcode = 4874  # SQLITE_IOERR_SHMSIZE
    assert storage_full(first_connection)
    assert not storage_full(sqlite3.OperationalError("database is locked"))
    assert not storage_full(OSError(errno.EACCES, "Permission denied"))
    assert not storage_full(None)


def test_rate_spends_are_counted_in_memory_while_the_disk_is_full(tmp_path: Path) -> None:
    """A spend that cannot be written still limits (same rate and burst, in this process), and
    the shared bucket governs again once space is back."""
    with small_tmpfs(tmp_path / "disk", megabytes=2) as disk:
        clock = ManualClock()
        db = SQLiteDatabase(disk / "rate.sqlite", durable=False)
        limiter = RateLimiter(db, clock)
        assert limiter.spend("org:test", 1.0, 3).recorded
        filler = fill(disk)
        assert room_to_write(disk).startswith("error")
        spends = [limiter.spend("org:live", 1.0, 3) for _ in range(4)]
        assert [s.recorded for s in spends] == [False] * 4
        assert [s.allowed for s in spends] == [True, True, True, False]
        clock.advance(1.0)
        assert limiter.spend("org:live", 1.0, 3).allowed  # refilled at the bucket's rate
        filler.unlink()
        back = limiter.spend("org:live", 1.0, 3)
        assert back.recorded and back.allowed
        db.close()


def test_readiness_fails_while_the_outbox_does_not_move(service_factory: ServiceFactory) -> None:
    """Events wait and no publisher moves them on (none runs here): not ready once the bound
    has passed, naming the backlog."""
    service = service_factory(nats_url=require_nats(), outbox_stuck_seconds=0.5)
    service.new_org()  # an event for the outbox
    with service.client() as client:
        first = client.get(service.base_url + "/readyz")
        assert first.status_code == 200, first.text
        time.sleep(0.6)
        stuck = client.get(service.base_url + "/readyz")
    assert stuck.status_code == 503
    assert stuck.json()["checks"]["outbox"].startswith("error: stuck for")


def test_wal_files_are_checkpointed_and_truncated(tmp_path: Path) -> None:
    db = SQLiteDatabase(tmp_path / "read.sqlite")
    with db.transaction() as cur:
        cur.execute("CREATE TABLE filler (body TEXT)")
    for _ in range(20):
        with db.transaction() as cur:
            cur.execute("INSERT INTO filler VALUES (?)", ("x" * 100_000,))
    wal = tmp_path / "read.sqlite-wal"
    assert wal.stat().st_size > 1_000_000
    assert truncate_wals(tmp_path) == {"read.sqlite": 0}
    assert wal.stat().st_size == 0
    with db.transaction() as cur:
        cur.execute("INSERT INTO filler VALUES (?)", ("x" * 100_000,))
    assert wal.stat().st_size > 0
    every_moment = WalCheckpointer(tmp_path, every=0.05)  # as `serve` runs it, every 30 s
    every_moment.start()
    try:
        wait_until(lambda: wal.stat().st_size == 0, timeout=10)
    finally:
        every_moment.stop()
    with db.read() as cur:  # the rows were checkpointed into the database, not lost
        assert cur.execute("SELECT count(*) AS n FROM filler").fetchone()["n"] == 21
    db.close()


@pytest.fixture
def quick_supervisor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nats_server, "PROBE_EVERY_SECONDS", 0.2)
    monkeypatch.setattr(nats_server, "STUCK_AFTER_SECONDS", 0.5)


def test_a_server_whose_publishes_keep_failing_is_restarted(
    tmp_path: Path, quick_supervisor: None
) -> None:
    server = nats_server.EmbeddedNats(tmp_path)
    server.start()
    try:
        first = server.process
        server.publish_failed_at = time.monotonic  # as the outbox reports it, forever
        wait_until(lambda: server.restarts >= 1, timeout=30)
        assert server.process is not first
        server.publish_failed_at = lambda: None
        wait_until(lambda: jetstream_cannot_store(server.url) is None, timeout=30)
    finally:
        server.stop()


def test_no_restart_onto_a_disk_without_room(
    tmp_path: Path, quick_supervisor: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(nats_server, "ROOM_BYTES", 1 << 62)  # never room enough
    server = nats_server.EmbeddedNats(tmp_path)
    server.start()
    try:
        server.publish_failed_at = time.monotonic
        wait_until(lambda: server.jetstream_error is not None, timeout=30)
        time.sleep(1.5)
        assert server.restarts == 0
    finally:
        server.stop()
