"""SQLite in the embedded default: a serving process keeps SQLite's own locks on the event
log's WAL index, and idempotency records reach the disk with the events saved under them.

SQLite holds a shared POSIX lock on the `-shm` file's "DMS" byte for as long as a connection
has the WAL index mapped; a process that can take that byte exclusively believes it is alone
and resets the index. POSIX locks belong to the process and inode, so closing *any* descriptor
of that file in the process drops them all. When the service mapped `-shm` itself and closed
its descriptor, the next CLI process (`partner-api audit replay` while serving) reset the
index under the service, which died of SIGBUS in a read; two writers could as well have
appended to the WAL at once. Only another process can see the lock (`F_GETLK` ignores the
caller's own), so the check runs in one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from conftest import RunningService
from test_orders_sandbox import counts, new_workspace

from infra.database import SQLiteDatabase
from infra.idempotency import StoredResponse, fingerprint
from infra.settings import Settings
from runtime.container import Container

pytestmark = pytest.mark.parametrize("store_kind", ["sqlite"])

# SQLite's unix VFS: the DMS byte follows the eight WAL-index lock bytes, which start at 120.
DMS_BYTE = 128

LOCK_HOLDER = """
import fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDWR)
probe = struct.pack("hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, int(sys.argv[2]), 1, 0)
l_type, _, _, _, pid = struct.unpack("hhqqi4x", fcntl.fcntl(fd, fcntl.F_GETLK, probe))
print(pid if l_type != fcntl.F_UNLCK else 0)
"""


def holder_of_wal_index_lock(shm_path: str) -> int:
    """The pid holding a lock that conflicts with an exclusive one on the DMS byte, or 0."""
    found = subprocess.run(
        [sys.executable, "-c", LOCK_HOLDER, shm_path, str(DMS_BYTE)],
        capture_output=True, text=True, check=True,
    )
    return int(found.stdout)


def test_serving_keeps_its_shared_lock_on_the_wal_index(service: RunningService) -> None:
    shm_path = f"{service.container.settings.data_dir / 'events.sqlite'}-shm"
    with service.partner() as partner:
        for _ in range(3):  # the key check reads the log on each request
            assert partner.get("/me").status_code == 200
        assert partner.post("/bundles", json={
            "name": "Standard", "monthly_sending_volume": 10000, "send_on_weekends": False,
        }).status_code == 201
    assert service.container.store.commit_stamp() is not None
    time.sleep(0.1)  # the outbox, if running, compares stamps meanwhile
    assert os.path.exists(shm_path)
    assert holder_of_wal_index_lock(shm_path) == os.getpid()


def test_commit_stamp_changes_with_a_commit_by_another_connection(
    service: RunningService,
) -> None:
    store = service.container.store
    before = store.commit_stamp()
    assert store.commit_stamp() == before  # nothing committed in between
    service.new_org("Stamped")  # a save through the store's own recorder
    assert store.commit_stamp() != before


def test_idempotency_records_share_the_events_file(service: RunningService) -> None:
    """A claim or stored response that a machine crash could lose while the order it guards
    survived would let a retry with the same key place the order again. They live in the
    events file, whose WAL is written in order and flushed by every save: the claim reaches
    the disk with (or before) the events saved under it, at one flush per request."""
    with service.partner() as partner:
        workspace = new_workspace(partner)
        order = partner.post("/orders", json=counts(workspace),
                             headers={"Idempotency-Key": "durable-1"})
        assert order.status_code == 201, order.text
    store = service.container.idempotency
    events_file = service.container.store.env["SQLITE_DBNAME"]
    for records in (store._claims, store._responses):
        assert isinstance(records, SQLiteDatabase) and str(records.path) == events_file
    (saved,) = store._responses.statement(
        "SELECT state FROM idempotency_records WHERE idem_key = 'durable-1'")
    assert saved["state"] == "done"


def test_records_kept_in_the_operational_file_move_beside_the_events(
    settings: Settings,
) -> None:
    """A deployment that kept its records in ops.sqlite finds them after the upgrade."""
    old = SQLiteDatabase(settings.data_dir / "ops.sqlite")
    with old.transaction() as cur:
        cur.execute(
            "CREATE TABLE idempotency_records (scope TEXT NOT NULL, idem_key TEXT NOT NULL, "
            "fingerprint TEXT NOT NULL, state TEXT NOT NULL, status INTEGER, body TEXT, "
            "created_at DOUBLE PRECISION NOT NULL, leased_at DOUBLE PRECISION, "
            "PRIMARY KEY (scope, idem_key))")
        cur.execute("INSERT INTO idempotency_records VALUES "
                    "('org_a:test', 'k1', ?, 'done', 201, '{\"id\": 1}', ?, NULL)",
                    (fingerprint("POST", "/p", b"{}"), time.time()))
    old.close()
    container = Container.build(settings)
    try:
        replay = container.idempotency.begin("org_a:test", "k1", fingerprint("POST", "/p", b"{}"))
        assert isinstance(replay, StoredResponse) and replay.body == b'{"id": 1}'
        assert not container.ops_db.statement(
            "SELECT name FROM sqlite_master WHERE name = 'idempotency_records'")
    finally:
        container.close()
