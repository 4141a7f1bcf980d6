"""The delivery records' write rules, on the store itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from infra.database import Database, SQLiteDatabase
from infra.settings import Settings
from runtime.container import Container
from webhooks.deliveries import (
    Due,
    Outcome,
    _attempt_row,
    _insert_attempts,
    _move,
    _write_move,
    claim_due,
    enqueue,
    redeliver,
    renew_claim,
)
from webhooks.dispatcher import WebhookDispatcher
from webhooks.event_log import DELIVERY_DDL


def redelivered_during_an_attempt(db: Database) -> tuple[tuple[int, int], Outcome]:
    """`evt_1` redelivered after its fourth failed attempt of five while a fifth was under
    way: the counters the dispatcher read before, and that attempt's failure."""
    event = {"id": "evt_1", "tenant": "org_1:test", "envelope": "{}"}
    redeliver(db, event, "org_1", now=0.0)
    with db.transaction() as cur:  # four failed attempts of five
        cur.execute("UPDATE webhook_deliveries SET attempts = 4, round_attempts = 4")
    redeliver(db, event, "org_1", now=1.0)
    return (4, 4), Outcome(attempted_at=1.0, duration_ms=1.0, status_code=500, error="HTTP 500")


def test_an_attempt_finishing_after_a_redelivery_leaves_the_new_round_standing(
    tmp_path: Path,
) -> None:
    """On PostgreSQL a redelivery can commit between the dispatcher's read of the counters and
    its write: the attempt is recorded, but it must not end the fresh round as failed."""
    db = SQLiteDatabase(tmp_path / "read.sqlite")
    try:
        with db.transaction() as cur:
            for statement in DELIVERY_DDL:
                cur.execute(statement)
        stale, failed = redelivered_during_an_attempt(db)
        with db.transaction() as cur:
            _insert_attempts(cur, [_attempt_row("evt_1", 5, failed)])
            _write_move(cur, _move("evt_1", stale, failed, (1.0,), now=2.0))
            row = cur.execute("SELECT * FROM webhook_deliveries").fetchone()
            attempts = cur.execute("SELECT number FROM webhook_attempts").fetchall()
        assert (row["status"], row["round_attempts"], row["attempts"]) == ("pending", 0, 5)
        assert [a["number"] for a in attempts] == [5]
    finally:
        db.close()


def test_a_lease_outlived_while_waiting_for_a_slot_is_renewed_only_if_still_held(
    tmp_path: Path,
) -> None:
    """A dispatcher claims a delivery, then may wait for a free slot past its lease; another
    dispatcher can claim the row meanwhile. The first renews before attempting, and only
    while the row still carries its own lease: never two posts of one delivery at once."""
    db = SQLiteDatabase(tmp_path / "read.sqlite")
    try:
        with db.transaction() as cur:
            for statement in DELIVERY_DDL:
                cur.execute(statement)
        item = Due("evt_1", "org_1", "{}", tenant="org_1:test")
        (mine,) = enqueue(db, [item], now=0.0, lease=20.0)
        assert mine.leased_until == 20.0
        assert renew_claim(db, mine, until=35.0)  # still mine: extended
        assert claim_due(db, now=30.0, lease=20.0, skip=set()) == []  # the renewal holds
        renewed = Due(mine.event_id, mine.org_id, mine.payload, 35.0)
        (theirs,) = claim_due(db, now=36.0, lease=20.0, skip=set())  # another dispatcher
        assert theirs.leased_until == 56.0
        assert not renew_claim(db, renewed, until=60.0)  # no longer mine: not attempted
        assert renew_claim(db, theirs, until=70.0)
    finally:
        db.close()


@pytest.mark.parametrize("store_kind", ["sqlite"])
def test_the_dispatcher_records_deliveries_durably_before_acking_jetstream(
    settings: Settings,
) -> None:
    """JetStream forgets an acked message: the row it became must survive a machine crash,
    so the intake's SQLite commits fsync (synchronous=FULL, 2); the read models need not."""
    container = Container.build(settings)
    try:
        dispatcher = WebhookDispatcher(container)
        (row,) = dispatcher.intake_db.statement("PRAGMA synchronous")
        assert row["synchronous"] == 2
        (row,) = container.read_db.statement("PRAGMA synchronous")
        assert row["synchronous"] == 1
    finally:
        container.close()
