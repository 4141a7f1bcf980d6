"""The delivery records' write rules, on the store itself."""

from __future__ import annotations

from pathlib import Path

from infra.database import SQLiteDatabase
from webhooks.deliveries import Outcome, _attempt_row, _insert_attempts, _record, redeliver
from webhooks.event_log import DELIVERY_DDL


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
        event = {"id": "evt_1", "tenant": "org_1:test", "envelope": "{}"}
        redeliver(db, event, "org_1", now=0.0)
        with db.transaction() as cur:  # four failed attempts of five
            cur.execute("UPDATE webhook_deliveries SET attempts = 4, round_attempts = 4")
        stale = (4, 4)  # what the dispatcher read before the redelivery below
        redeliver(db, event, "org_1", now=1.0)
        failed = Outcome(attempted_at=1.0, duration_ms=1.0, status_code=500, error="HTTP 500")
        with db.transaction() as cur:
            _insert_attempts(cur, [_attempt_row("evt_1", 5, failed)])
            _record(cur, "evt_1", stale, failed, (1.0,), now=2.0)
            row = cur.execute("SELECT * FROM webhook_deliveries").fetchone()
            attempts = cur.execute("SELECT number FROM webhook_attempts").fetchall()
        assert (row["status"], row["round_attempts"], row["attempts"]) == ("pending", 0, 5)
        assert [a["number"] for a in attempts] == [5]
    finally:
        db.close()
