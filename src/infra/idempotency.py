"""Durable idempotency records (spec 8): 24-hour window per organization and environment."""

from __future__ import annotations

import hashlib
import json
import uuid
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from eventsourcing.domain import Aggregate

from domain.creation_ids import CREATION_IDS
from domain.errors import DomainError, StillInProgress
from infra.clock import Clock
from infra.database import Database

if TYPE_CHECKING:
    from runtime.container import Container

WINDOW_SECONDS = 24 * 3600.0
# A claim still `running` after this long belongs to a process that died mid-request: a retry
# with the same key takes it over instead of waiting 24 h. No live request runs this long (its
# longest waits: 30 s for a SQLite lock, 10 s for the read models), since a retry taking over
# a live request's claim would run the request twice.
CLAIM_LEASE_SECONDS = 60.0
T = TypeVar("T", bound=Aggregate)
_ID_NAMESPACE = uuid.UUID("5b0d6c2e-3f51-4c1e-9a43-4a7c1d2b9e10")

# The claim the current request runs under.
_CLAIM: ContextVar[Claim | None] = ContextVar("idempotency_claim", default=None)


def claimed_id(kind: str) -> uuid.UUID | None:
    """A stable id for what the current idempotent request creates, or None outside one.

    A request taking over a dead process's claim derives the same id, so it finds what the
    first attempt saved (if it got that far) instead of creating it a second time."""
    claim = _CLAIM.get()
    return None if claim is None else claim.id_for(kind)


def created_before(container: Container, kind: str, cls: type[T]) -> T | None:
    """The `kind` resource an earlier attempt of the current idempotent request saved before
    its process died (its id derives from the claim: domain.creation_ids), if any."""
    if not earlier_attempt_possible():
        return None
    found = container.store.find(claimed_id(kind), cls)
    return found if isinstance(found, cls) else None


def earlier_attempt_possible() -> bool:
    """Whether another attempt may have run under the current claim: only a claim taken over
    from a failed or dead attempt. A fresh claim's ids are new, so nothing to look for."""
    claim = _CLAIM.get()
    return claim is not None and claim.taken_over


@dataclass(frozen=True)
class StoredResponse:
    status: int
    body: bytes


@dataclass(frozen=True)
class Claim:
    """This request holds the key: run it under `claimed()`."""

    scope: str
    key: str
    created_at: float
    taken_over: bool = False
    leased_at: float | None = None  # set by a takeover: the lease this request holds

    @property
    def lease(self) -> float:
        """The row's `COALESCE(leased_at, -1)` while this request still holds the claim."""
        return -1.0 if self.leased_at is None else self.leased_at

    def enter(self) -> Any:
        """Run under this claim: what the request creates takes ids derived from it."""
        return _CLAIM.set(self), CREATION_IDS.set(self.id_for)

    def id_for(self, kind: str) -> uuid.UUID:
        return uuid.uuid5(_ID_NAMESPACE, f"{kind}\n{self.scope}\n{self.key}\n{self.created_at!r}")

    @staticmethod
    def leave(token: Any) -> None:
        claim_token, ids_token = token
        CREATION_IDS.reset(ids_token)
        _CLAIM.reset(claim_token)


def fingerprint(method: str, path: str, body: bytes) -> str:
    """Same request = same method, path and JSON value (key order and spacing do not count)."""
    try:
        canonical = json.dumps(json.loads(body or b"null"), sort_keys=True, separators=(",", ":"))
    except ValueError:
        canonical = body.decode("latin-1")
    return hashlib.sha256(f"{method} {path}\n{canonical}".encode()).hexdigest()


class IdempotencyStore:
    """The records live in the event store's own database (SQLite: the events file; PostgreSQL:
    its schema), so that one durable commit per request is enough: the claim and the stored
    response commit without waiting for their own flush, and the event store's durable commit
    of what the request saves flushes the claim with it (one WAL, written in order). A crash
    can then only lose a claim together with what was saved under it, never the claim alone
    (a retry would save the order again under new ids). A response lost to a machine crash
    leaves a claim that a retry takes over after its lease, deriving the same ids, so it
    finds what was saved and answers it (as after a process that died between the two)."""

    def __init__(self, db: Database, clock: Clock, moved_from: Database | None = None) -> None:
        self.db = db
        self._claims = db.relaxed()
        self._responses = db.relaxed()
        self.clock = clock
        with db.transaction() as cur:
            cur.execute(
                "CREATE TABLE IF NOT EXISTS idempotency_records (scope TEXT NOT NULL, "
                "idem_key TEXT NOT NULL, fingerprint TEXT NOT NULL, state TEXT NOT NULL, "
                "status INTEGER, body TEXT, created_at DOUBLE PRECISION NOT NULL, "
                "PRIMARY KEY (scope, idem_key))"
            )
            _add_lease_column(cur, db.dialect)
        if moved_from is not None:
            _move_records(moved_from, db)

    def begin(self, scope: str, key: str, print_: str) -> StoredResponse | Claim:
        """Claim the key, or return the first response; raise while the first still runs."""
        now = self.clock.now()
        # A new key (nearly every request) is one statement; only a key seen before takes
        # the transaction below, which also clears an expired record first.
        if self._claims.statement(
            "INSERT INTO idempotency_records (scope, idem_key, fingerprint, state, created_at) "
            "VALUES (?, ?, ?, 'running', ?) ON CONFLICT (scope, idem_key) DO NOTHING "
            "RETURNING idem_key",
            (scope, key, print_, now),
        ):
            return Claim(scope, key, now)
        with self._claims.transaction() as cur:
            cur.execute(
                "DELETE FROM idempotency_records WHERE scope = ? AND idem_key = ? "
                "AND created_at < ?",
                (scope, key, now - WINDOW_SECONDS),
            )
            claimed = cur.execute(
                "INSERT INTO idempotency_records (scope, idem_key, fingerprint, state, created_at) "
                "VALUES (?, ?, ?, 'running', ?) ON CONFLICT (scope, idem_key) DO NOTHING",
                (scope, key, print_, now),
            ).rowcount
            if claimed:
                return Claim(scope, key, now)
            row = cur.execute(
                "SELECT fingerprint, state, status, body, created_at FROM idempotency_records "
                "WHERE scope = ? AND idem_key = ?",
                (scope, key),
            ).fetchone()
            taken = _take_over(cur, row, scope, key, print_, now) if row is not None else None
            if taken is not None:
                return taken
        return _replay(row, print_)

    # Only while the request still holds the claim: one that outlived its lease (a retry took
    # it over) must not end the retry's claim, nor answer for it.
    _HELD = "scope = ? AND idem_key = ? AND state = 'running' AND COALESCE(leased_at, -1) = ?"

    def finish(self, claim: Claim, status: int, body: bytes) -> None:
        self._responses.statement(
            f"UPDATE idempotency_records SET state = 'done', status = ?, body = ? WHERE {self._HELD}",
            (status, body.decode(), claim.scope, claim.key, claim.lease),
        )

    def release(self, claim: Claim) -> None:
        """Free the claim of a request that failed, so the client may retry with the same key.

        The row stays (as `failed`): a failure after the save (a dropped connection, say) must
        let the retry derive the same ids and find what was saved rather than save it again."""
        with self._claims.transaction() as cur:
            cur.execute(
                f"UPDATE idempotency_records SET state = 'failed' WHERE {self._HELD}",
                (claim.scope, claim.key, claim.lease),
            )


def _take_over(
    cur: Any, row: dict[str, Any], scope: str, key: str, print_: str, now: float
) -> Claim | None:
    """A failed attempt's claim, or a running one whose process died, passes to the retry.
    With the same body it keeps its creation time, so the retry derives the same ids."""
    same_body = row["fingerprint"] == print_
    if row["state"] == "failed":
        started = float(row["created_at"]) if same_body else now
        moved = cur.execute(
            "UPDATE idempotency_records SET state = 'running', fingerprint = ?, created_at = ?, "
            "leased_at = ? WHERE scope = ? AND idem_key = ? AND state = 'failed'",
            (print_, started, now, scope, key),
        ).rowcount
        return Claim(scope, key, started, taken_over=True, leased_at=now) if moved else None
    if row["state"] == "running" and same_body:
        # A new lease, compare-and-set: of several retries waiting out one dead claim, one
        # takes it over; the others are told it is in progress.
        moved = cur.execute(
            "UPDATE idempotency_records SET leased_at = ? WHERE scope = ? AND idem_key = ? "
            "AND state = 'running' AND COALESCE(leased_at, created_at) < ?",
            (now, scope, key, now - CLAIM_LEASE_SECONDS),
        ).rowcount
        if not moved:
            return None
        return Claim(scope, key, float(row["created_at"]), taken_over=True, leased_at=now)
    return None


def _add_lease_column(cur: Any, dialect: str) -> None:
    """`leased_at`: when a retry took over the claim (NULL: its `created_at`). Added to a
    table created before it existed."""
    if dialect == "postgres":  # ALTER TABLE locks the table: only when the column is missing
        columns = {row["column_name"] for row in cur.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = "
            "current_schema() AND table_name = 'idempotency_records'").fetchall()}
    else:
        columns = {row["name"] for row in cur.execute(
            "PRAGMA table_info(idempotency_records)").fetchall()}
    if "leased_at" not in columns:
        cur.execute("ALTER TABLE idempotency_records ADD COLUMN leased_at DOUBLE PRECISION")


def _replay(row: dict[str, Any] | None, print_: str) -> StoredResponse:
    if row is None:  # removed between our insert and select: treat as running
        raise StillInProgress("A request with this key is still running.")
    if row["fingerprint"] != print_:
        raise DomainError(
            "idempotency_conflict",
            "This Idempotency-Key was used with a different request body.",
            field="Idempotency-Key",
        )
    if row["state"] != "done":
        raise StillInProgress(
            "A request with this Idempotency-Key is still being processed; retry shortly."
        )
    return StoredResponse(int(row["status"]), str(row["body"]).encode())


_COLUMNS = "scope, idem_key, fingerprint, state, status, body, created_at, leased_at"


def _move_records(old: Database, new: Database) -> None:
    """Records a deployment kept in its operational database before they moved beside the
    events: copied over (those already there win), then removed from the old place."""
    with old.transaction() as cur:
        if not cur.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND "
                           "name = 'idempotency_records'").fetchall():
            return
        rows = cur.execute("SELECT * FROM idempotency_records").fetchall()
        with new.transaction() as into:
            for row in rows:
                into.execute(
                    f"INSERT INTO idempotency_records ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (scope, idem_key) DO NOTHING",
                    tuple(row.get(c.strip()) for c in _COLUMNS.split(",")),
                )
        cur.execute("DROP TABLE idempotency_records")
