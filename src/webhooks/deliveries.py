"""Delivery state of each webhook event and every attempt, in the read database beside the
event log (so the events API joins them); written by the dispatcher and by redelivery.

A row is `pending` until a 2xx arrives (`delivered`) or the attempts of the current round run
out (`failed`). `claimed_until` is a lease: whichever dispatcher set it owns the next attempt,
and a dispatcher that died loses the row back to the others when the lease runs out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from infra.database import Database

MAX_ATTEMPTS = 5
STATUSES = ("pending", "delivered", "failed")


@dataclass(frozen=True)
class Due:
    event_id: str
    org_id: str
    payload: str
    leased_until: float = 0.0  # the `claimed_until` this dispatcher set: its lease
    tenant: str = ""  # org_...:test or org_...:live
    change: str = ""  # the stored event it came from (`stream.CHANGE_HEADER`)
    after_parts: bool = False  # sent once its change's other first attempts ended
    parts: tuple[str, ...] = ()  # those other events' ids, where the message names them


def first_attempts_ended(db: Database, event_ids: Sequence[str]) -> bool:
    """Whether every one of these deliveries had its first attempt, by whichever dispatcher
    took it (or ended without one)."""
    if not event_ids:
        return True
    marks = ", ".join("?" for _ in event_ids)
    with db.read() as cur:
        row = cur.execute(
            f"SELECT COUNT(*) AS n FROM webhook_deliveries WHERE event_id IN ({marks}) "
            "AND (attempts > 0 OR status <> 'pending')",
            tuple(event_ids),
        ).fetchone()
    return int(row["n"]) == len(set(event_ids))


def attempts_allowed(schedule: Sequence[float]) -> int:
    """Spec 6: 5 attempts, whatever the schedule's length. The schedule is a timing knob
    (decisions 1): it sets the waits only, a short one repeating its last wait."""
    return MAX_ATTEMPTS if schedule else 1


# Rows per multi-row statement: far below SQLite's limit of bound parameters.
CHUNK = 500
# From this many attempts in a batch, one statement over arrays costs less CPU than a statement
# each (psycopg dumps an array element by element). Measured on PostgreSQL: below about 8,
# up to half again as much; from 10, a third less.
AT_ONCE_FROM = 8


def enqueue(db: Database, items: Sequence[Due], now: float, lease: float) -> list[Due]:
    """Record new deliveries (each of its `tenant`), claimed by the caller; returns the ones
    that were new."""
    chunks = [items[start : start + CHUNK] for start in range(0, len(items), CHUNK)]
    # One statement per chunk: a round trip per event cost more than the insert itself. The
    # usual single chunk commits on its own (autocommit): no BEGIN and COMMIT round trips.
    if len(chunks) == 1:
        inserted = db.statement(*_enqueue_statement(chunks[0], now, lease))
    else:
        with db.transaction() as cur:
            inserted = [
                row
                for chunk in chunks
                for row in cur.execute(*_enqueue_statement(chunk, now, lease)).fetchall()
            ]
    new_ids = {row["event_id"] for row in inserted}
    new: list[Due] = []
    for item in items:  # an event JetStream handed over twice in one batch counts once
        if item.event_id in new_ids:
            new_ids.discard(item.event_id)
            new.append(replace(item, leased_until=now + lease))
    return new


def _enqueue_statement(chunk: Sequence[Due], now: float, lease: float) -> tuple[str, list[Any]]:
    rows = ", ".join("(?, ?, ?, ?, 'pending', ?, ?, ?)" for _ in chunk)
    params = [
        value
        for item in chunk
        for value in (item.event_id, item.tenant, item.org_id, item.payload, now, now + lease, now)
    ]
    return (
        "INSERT INTO webhook_deliveries (event_id, tenant, org_id, payload, status, "
        f"next_attempt_at, claimed_until, updated_at) VALUES {rows} "
        "ON CONFLICT (event_id) DO NOTHING RETURNING event_id",
        params,
    )


def claim_due(
    db: Database, now: float, lease: float, skip: set[str], limit: int = 200
) -> list[Due]:
    """Pending rows whose time has come and whose lease (if any) ran out, now leased to us."""
    with db.read() as cur:
        rows = cur.execute(
            "SELECT event_id, org_id, payload, tenant FROM webhook_deliveries "
            "WHERE status = 'pending' AND next_attempt_at <= ? "
            "AND (claimed_until IS NULL OR claimed_until < ?) ORDER BY next_attempt_at LIMIT ?",
            (now, now, limit),
        ).fetchall()
    rows = [r for r in rows if r["event_id"] not in skip]
    if not rows:
        return []
    claimed: list[Due] = []
    with db.transaction() as cur:
        for row in rows:
            cur.execute(
                "UPDATE webhook_deliveries SET claimed_until = ? WHERE event_id = ? "
                "AND status = 'pending' AND (claimed_until IS NULL OR claimed_until < ?)",
                (now + lease, row["event_id"], now),
            )
            if cur.rowcount == 1:
                claimed.append(
                    Due(row["event_id"], row["org_id"], row["payload"], now + lease, row["tenant"])
                )
    return claimed


def claim_due_of_tenant(
    db: Database, tenant: str, due_by: float, real_now: float, lease: float
) -> list[Due]:
    """A sandbox clock's advance (decisions.md 6): the tenant's pending rows due by its sandbox
    time `due_by`, leased on real time as the dispatcher's claims are, so neither posts a
    delivery the other holds. The advance posts them one after another and renews each lease
    just before its post (`renew_claim`): an advance that died leaves none leased for longer
    than `lease`, so the next one takes them over."""
    with db.transaction() as cur:
        rows = cur.execute(
            "SELECT event_id, org_id, payload FROM webhook_deliveries WHERE tenant = ? "
            "AND status = 'pending' AND next_attempt_at <= ? "
            "AND (claimed_until IS NULL OR claimed_until < ?) ORDER BY next_attempt_at",
            (tenant, due_by, real_now),
        ).fetchall()
        claimed: list[Due] = []
        until = real_now + lease
        for row in rows:
            cur.execute(
                "UPDATE webhook_deliveries SET claimed_until = ? WHERE event_id = ? "
                "AND status = 'pending' AND (claimed_until IS NULL OR claimed_until < ?)",
                (until, row["event_id"], real_now),
            )
            if cur.rowcount == 1:
                claimed.append(Due(row["event_id"], row["org_id"], row["payload"], until))
    return claimed


def renew_claim(db: Database, due: Due, until: float) -> bool:
    """Extend this dispatcher's lease on a delivery to `until`, if it still holds it (the row
    still carries the lease it set): a claim that waited for a free slot past its lease may
    have passed to another dispatcher meanwhile, and then is not attempted here."""
    with db.transaction() as cur:
        cur.execute(
            "UPDATE webhook_deliveries SET claimed_until = ? WHERE event_id = ? "
            "AND status = 'pending' AND claimed_until = ?",
            (until, due.event_id, due.leased_until),
        )
        return bool(cur.rowcount == 1)


def next_due_at(db: Database) -> float | None:
    with db.read() as cur:
        row = cur.execute(
            "SELECT MIN(next_attempt_at) AS at FROM webhook_deliveries WHERE status = 'pending'"
        ).fetchone()
    return None if row is None or row["at"] is None else float(row["at"])


@dataclass(frozen=True)
class Outcome:
    attempted_at: float
    duration_ms: float
    status_code: int | None
    error: str | None
    # The time the next attempt is scheduled from, when not the writer's `now`: a sandbox
    # delivery's retries run on its organization's sandbox clock (decisions.md 6).
    scheduled_from: float | None = None

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def record_attempts(
    db: Database, outcomes: Sequence[tuple[str, Outcome]], schedule: Sequence[float], now: float
) -> list[str]:
    """Store each attempt and move its delivery on, all in one transaction (the dispatcher
    groups the attempts that finish together); returns the new statuses in order."""
    # Pipeline mode on PostgreSQL: one read of the counters, then the writes without a round
    # trip each. A larger batch there: each kind of write one statement over arrays, of the
    # same text whatever the batch's size (so psycopg and the server keep it prepared).
    at_once = db.dialect == "postgres" and len(outcomes) >= AT_ONCE_FROM
    with db.bulk_transaction() as cur:
        counters = _counters(cur, [event_id for event_id, _ in outcomes], at_once)
        statuses = []
        moves: list[_Move] = []
        attempts = []
        for event_id, outcome in outcomes:
            counter = counters.get(event_id)
            if counter is None:
                statuses.append("pending")
                continue
            attempts.append(_attempt_row(event_id, counter[0] + 1, outcome))
            moves.append(_move(event_id, counter, outcome, schedule, now))
            statuses.append(moves[-1].status)
            counters[event_id] = (counter[0] + 1, counter[1] + 1)
        # A delivery twice in one batch is moved twice, in order: one statement would move it
        # once.
        if at_once and len({move.event_id for move in moves}) == len(moves):
            _write_moves_at_once(cur, moves)
            _insert_attempts_at_once(cur, attempts)
        else:
            for move in moves:
                _write_move(cur, move)
            _insert_attempts(cur, attempts)
        _add_to_totals(cur, [o for event_id, o in outcomes if event_id in counters])
        return statuses


def _attempt_row(event_id: str, number: int, outcome: Outcome) -> tuple[Any, ...]:
    return (
        event_id,
        number,
        outcome.attempted_at,
        outcome.status_code,
        outcome.error,
        round(outcome.duration_ms, 3),
        outcome.succeeded,
    )


def _insert_attempts(cur: Any, rows: Sequence[tuple[Any, ...]]) -> None:
    for start in range(0, len(rows), CHUNK):
        chunk = rows[start : start + CHUNK]
        marks = ", ".join("(?, ?, ?, ?, ?, ?, ?)" for _ in chunk)
        cur.execute(
            f"INSERT INTO {_ATTEMPT_COLUMNS} VALUES {marks}",
            tuple(value for row in chunk for value in row),
        )


_ATTEMPT_COLUMNS = (
    "webhook_attempts (event_id, number, attempted_at, status_code, error, duration_ms, "
    "succeeded)"
)


def _insert_attempts_at_once(cur: Any, rows: Sequence[tuple[Any, ...]]) -> None:
    if rows:
        cur.execute(
            f"INSERT INTO {_ATTEMPT_COLUMNS} SELECT * FROM unnest(?::text[], ?::int[], "
            "?::float8[], ?::int[], ?::text[], ?::float8[], ?::bool[])",
            [list(column) for column in zip(*rows, strict=True)],
        )


def _add_to_totals(cur: Any, recorded: Sequence[Outcome]) -> None:
    succeeded = sum(1 for outcome in recorded if outcome.succeeded)
    for name, count in (("success", succeeded), ("failure", len(recorded) - succeeded)):
        if count:
            cur.execute(
                "INSERT INTO webhook_attempt_totals (outcome, attempts) VALUES (?, ?) "
                "ON CONFLICT (outcome) DO UPDATE SET "
                "attempts = webhook_attempt_totals.attempts + excluded.attempts",
                (name, count),
            )


def record_attempt(
    db: Database, event_id: str, outcome: Outcome, schedule: Sequence[float], now: float
) -> str:
    """Store the attempt and move the delivery on; returns the new status."""
    return record_attempts(db, [(event_id, outcome)], schedule, now)[0]


def _counters(cur: Any, event_ids: Sequence[str], at_once: bool) -> dict[str, tuple[int, int]]:
    """Attempts so far, in all and in the current round, by event id."""
    select = "SELECT event_id, attempts, round_attempts FROM webhook_deliveries WHERE event_id"
    if at_once:
        rows = cur.execute(f"{select} = ANY(?)", (list(event_ids),)).fetchall()
    else:
        rows = []
        for start in range(0, len(event_ids), CHUNK):
            chunk = event_ids[start : start + CHUNK]
            marks = ", ".join("?" for _ in chunk)
            rows += cur.execute(f"{select} IN ({marks})", tuple(chunk)).fetchall()
    return {row["event_id"]: (int(row["attempts"]), int(row["round_attempts"])) for row in rows}


@dataclass(frozen=True)
class _Move:
    """What one attempt does to its delivery, if the delivery is still in the round read."""

    event_id: str
    number: int  # the attempt's number: the delivery's attempts from now on
    round_read: int  # the round's attempts as read; another round started meanwhile stands
    status: str
    next_at: float | None
    delivered_at: float | None
    updated_at: float
    in_round: int


def _move(
    event_id: str,
    counter: tuple[int, int],
    outcome: Outcome,
    schedule: Sequence[float],
    now: float,
) -> _Move:
    in_round = counter[1] + 1
    if outcome.scheduled_from is not None:
        now = outcome.scheduled_from
    next_at: float | None = None
    delivered_at: float | None = None
    if outcome.succeeded:
        status, delivered_at = "delivered", now
    elif in_round >= attempts_allowed(schedule):
        status = "failed"
    else:
        status = "pending"
        next_at = now + schedule[min(in_round - 1, len(schedule) - 1)]
    return _Move(event_id, counter[0] + 1, counter[1], status, next_at, delivered_at, now,
                 in_round)


# The attempt always counts; the round moves on only from the round read: a redelivery that
# started a new round meanwhile stands (its attempts are still to come), where this write would
# have ended it as failed. Every CASE sees the row as it was.
_SAME_ROUND = "round_attempts = {round_read}"
_MOVE_SET = (
    "attempts = {number}, "
    f"status = CASE WHEN {_SAME_ROUND} THEN {{status}} ELSE status END, "
    f"next_attempt_at = CASE WHEN {_SAME_ROUND} THEN {{next_at}} ELSE next_attempt_at END, "
    f"claimed_until = CASE WHEN {_SAME_ROUND} THEN NULL ELSE claimed_until END, "
    f"delivered_at = CASE WHEN {_SAME_ROUND} THEN COALESCE({{delivered_at}}, delivered_at) "
    "ELSE delivered_at END, "
    f"updated_at = CASE WHEN {_SAME_ROUND} THEN {{updated_at}} ELSE updated_at END, "
    f"round_attempts = CASE WHEN {_SAME_ROUND} THEN {{in_round}} ELSE round_attempts END"
)
_MOVE_FIELDS = ("event_id", "number", "round_read", "status", "next_at", "delivered_at",
                "updated_at", "in_round")
# One move, its values as parameters in the order they appear.
_MOVE_ONE = (
    "UPDATE webhook_deliveries SET "
    + _MOVE_SET.format(**{name: "?" for name in _MOVE_FIELDS})
    + " WHERE event_id = ?"
)
_MOVE_ONE_ORDER = ("number", "round_read", "status", "round_read", "next_at", "round_read",
                   "round_read", "delivered_at", "round_read", "updated_at", "round_read",
                   "in_round", "event_id")
# Every move of a batch: PostgreSQL reads the values from arrays, one per field (named apart
# from the table's columns, which the CASEs name unqualified).
_MOVE_ALL = (
    "UPDATE webhook_deliveries SET "
    + _MOVE_SET.format(**{name: f"u.m_{name}" for name in _MOVE_FIELDS})
    + " FROM unnest(?::text[], ?::int[], ?::int[], ?::text[], ?::float8[], ?::float8[], "
    f"?::float8[], ?::int[]) AS u ({', '.join('m_' + name for name in _MOVE_FIELDS)}) "
    "WHERE webhook_deliveries.event_id = u.m_event_id"
)


def _write_move(cur: Any, move: _Move) -> None:
    cur.execute(_MOVE_ONE, tuple(getattr(move, name) for name in _MOVE_ONE_ORDER))


def _write_moves_at_once(cur: Any, moves: Sequence[_Move]) -> None:
    if moves:
        cur.execute(_MOVE_ALL, [list(column) for column in zip(*map(_fields, moves), strict=True)])


def _fields(move: _Move) -> tuple[Any, ...]:
    return tuple(getattr(move, name) for name in _MOVE_FIELDS)


def release(db: Database, event_id: str) -> None:
    """Give a claimed row back without an attempt (the dispatcher is stopping)."""
    with db.transaction() as cur:
        cur.execute(
            "UPDATE webhook_deliveries SET claimed_until = NULL WHERE event_id = ?", (event_id,)
        )


def redeliver(db: Database, event: dict[str, Any], org_id: str, now: float) -> None:
    """Send the same event (same id) again, with a fresh round of attempts."""
    with db.transaction() as cur:
        cur.execute(
            "INSERT INTO webhook_deliveries (event_id, tenant, org_id, payload, status, "
            "next_attempt_at, updated_at) VALUES (?, ?, ?, ?, 'pending', ?, ?) "
            "ON CONFLICT (event_id) DO UPDATE SET status = 'pending', round_attempts = 0, "
            "next_attempt_at = excluded.next_attempt_at, claimed_until = NULL, "
            "updated_at = excluded.updated_at",
            (event["id"], event["tenant"], org_id, event["envelope"], now, now),
        )


def attempts_of(cur: Any, event_ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {event_id: [] for event_id in event_ids}
    if not event_ids:
        return found
    marks = ", ".join("?" for _ in event_ids)
    rows = cur.execute(
        f"SELECT event_id, number, attempted_at, status_code, error, duration_ms, succeeded "
        f"FROM webhook_attempts WHERE event_id IN ({marks}) ORDER BY event_id, number",
        tuple(event_ids),
    ).fetchall()
    for row in rows:
        found[row["event_id"]].append(row)
    return found


def attempt_counts(db: Database) -> dict[str, int]:
    """Every attempt recorded, by outcome (`success`, `failure`)."""
    with db.read() as cur:
        rows = cur.execute("SELECT outcome, attempts FROM webhook_attempt_totals").fetchall()
    counts = {"success": 0, "failure": 0}
    for row in rows:
        counts[row["outcome"]] = int(row["attempts"])
    return counts
