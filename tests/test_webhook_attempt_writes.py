"""Attempts finishing together are written in one transaction: on PostgreSQL each kind of write
is one statement over arrays. Whatever the path, each delivery ends exactly as if its attempts
had been recorded one at a time."""

from __future__ import annotations

from typing import Any

import pytest
from test_webhooks_records import redelivered_during_an_attempt

from infra.database import Database
from webhooks.deliveries import (
    AT_ONCE_FROM,
    Due,
    Outcome,
    _move,
    _write_moves_at_once,
    enqueue,
    record_attempt,
    record_attempts,
)

SCHEDULE = (10.0, 60.0)
NOW = 1_800_000_000.0


MORE = [f"evt_more_{n}" for n in range(4)]  # the batch over AT_ONCE_FROM: arrays on PostgreSQL


def _outcomes() -> list[tuple[str, Outcome]]:
    return [
        *[(event_id, Outcome(NOW, 1.5, 404 + n, None)) for n, event_id in enumerate(MORE)],
        ("evt_ok", Outcome(NOW, 12.5, 200, None)),
        ("evt_refused", Outcome(NOW, 3.25, 500, None)),
        ("evt_unreachable", Outcome(NOW, 1.0, None, "connection refused")),
        ("evt_sandbox", Outcome(NOW + 86_400, 2.0, 503, None, scheduled_from=NOW + 86_400)),
        ("evt_unknown", Outcome(NOW, 1.0, 200, None)),  # no such delivery: stays "pending"
        ("evt_twice", Outcome(NOW, 1.0, 500, None)),
    ]


def _rows(db: Database) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    with db.read() as cur:
        deliveries = cur.execute(
            "SELECT event_id, status, attempts, round_attempts, next_attempt_at, claimed_until, "
            "delivered_at, updated_at FROM webhook_deliveries ORDER BY event_id"
        ).fetchall()
        attempts = cur.execute(
            "SELECT event_id, number, attempted_at, status_code, error, duration_ms, succeeded "
            "FROM webhook_attempts ORDER BY event_id, number"
        ).fetchall()
    return [dict(row) for row in deliveries], [dict(row) for row in attempts]


def test_a_batch_ends_as_attempts_recorded_one_by_one(open_db: Any) -> None:
    ids = ["evt_ok", "evt_refused", "evt_unreachable", "evt_sandbox", "evt_twice", *MORE]
    batch_db, single_db = open_db("batch"), open_db("single")
    for db in (batch_db, single_db):
        enqueue(db, [Due(i, "org_1", "{}", tenant="org_1:test") for i in ids], NOW - 5, 30.0)

    outcomes = _outcomes()
    statuses = record_attempts(batch_db, outcomes, SCHEDULE, NOW)
    # Alone (its own batch), so the batch above took the one-statement path on PostgreSQL.
    statuses.append(record_attempts(batch_db, [outcomes[-1]], SCHEDULE, NOW)[0])
    one_by_one = [record_attempt(single_db, i, o, SCHEDULE, NOW) for i, o in outcomes]
    one_by_one.append(record_attempt(single_db, *outcomes[-1], SCHEDULE, NOW))

    assert statuses == one_by_one
    assert len(outcomes) >= AT_ONCE_FROM
    assert statuses == [*["pending"] * len(MORE), "delivered", "pending", "pending", "pending",
                        "pending", "pending", "pending"]
    assert _rows(batch_db) == _rows(single_db)
    deliveries, _ = _rows(batch_db)
    sandbox = next(row for row in deliveries if row["event_id"] == "evt_sandbox")
    assert sandbox["next_attempt_at"] == NOW + 86_400 + SCHEDULE[0]
    twice = next(row for row in deliveries if row["event_id"] == "evt_twice")
    assert (twice["attempts"], twice["round_attempts"]) == (2, 2)


def test_a_delivery_twice_in_one_batch_counts_both_attempts(open_db: Any) -> None:
    db = open_db("batch")
    enqueue(db, [Due("evt_a", "org_1", "{}", tenant="org_1:live")], NOW - 5, 30.0)
    failed = Outcome(NOW, 1.0, 500, None)
    assert record_attempts(db, [("evt_a", failed), ("evt_a", failed)], (10.0,), NOW) == [
        "pending",
        "pending",
    ]
    deliveries, attempts = _rows(db)
    assert (deliveries[0]["attempts"], deliveries[0]["round_attempts"]) == (2, 2)
    assert [row["number"] for row in attempts] == [1, 2]


@pytest.mark.parametrize("store_kind", ["postgres"], indirect=True)  # its one-statement path
def test_a_batch_leaves_a_round_started_meanwhile_standing(open_db: Any) -> None:
    """As one attempt does (test_webhooks_records): a redelivery committed between the read of
    the counters and the write keeps its fresh round, on the one-statement path too."""
    db = open_db("batch")
    stale, failed = redelivered_during_an_attempt(db)
    with db.bulk_transaction() as cur:
        _write_moves_at_once(cur, [_move("evt_1", stale, failed, (1.0,), now=2.0)])
    deliveries, _ = _rows(db)
    assert (deliveries[0]["status"], deliveries[0]["round_attempts"]) == ("pending", 0)
    assert deliveries[0]["attempts"] == 5
