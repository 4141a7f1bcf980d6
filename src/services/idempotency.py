"""Durable idempotency records (spec 8): 24-hour window per organization and environment."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from domain.errors import DomainError
from infra.clock import Clock
from infra.database import Database

WINDOW_SECONDS = 24 * 3600.0


@dataclass(frozen=True)
class StoredResponse:
    status: int
    body: bytes


def fingerprint(method: str, path: str, body: bytes) -> str:
    """Same request = same method, path and JSON value (key order and spacing do not count)."""
    try:
        canonical = json.dumps(json.loads(body or b"null"), sort_keys=True, separators=(",", ":"))
    except ValueError:
        canonical = body.decode("latin-1")
    return hashlib.sha256(f"{method} {path}\n{canonical}".encode()).hexdigest()


class IdempotencyStore:
    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock
        with db.transaction() as cur:
            cur.execute(
                "CREATE TABLE IF NOT EXISTS idempotency_records (scope TEXT NOT NULL, "
                "idem_key TEXT NOT NULL, fingerprint TEXT NOT NULL, state TEXT NOT NULL, "
                "status INTEGER, body TEXT, created_at DOUBLE PRECISION NOT NULL, "
                "PRIMARY KEY (scope, idem_key))"
            )

    def begin(self, scope: str, key: str, print_: str) -> StoredResponse | None:
        """Claim the key, or return the first response; raise while the first still runs."""
        now = self.clock.now()
        with self.db.transaction() as cur:
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
                return None
            row = cur.execute(
                "SELECT fingerprint, state, status, body FROM idempotency_records "
                "WHERE scope = ? AND idem_key = ?",
                (scope, key),
            ).fetchone()
        return _replay(row, print_)

    def finish(self, scope: str, key: str, status: int, body: bytes) -> None:
        with self.db.transaction() as cur:
            cur.execute(
                "UPDATE idempotency_records SET state = 'done', status = ?, body = ? "
                "WHERE scope = ? AND idem_key = ?",
                (status, body.decode(), scope, key),
            )

    def release(self, scope: str, key: str) -> None:
        """Forget a claim whose request failed, so the client may retry with the same key."""
        with self.db.transaction() as cur:
            cur.execute(
                "DELETE FROM idempotency_records WHERE scope = ? AND idem_key = ? "
                "AND state = 'running'",
                (scope, key),
            )


def _replay(row: dict[str, Any] | None, print_: str) -> StoredResponse:
    if row is None:  # removed between our insert and select: treat as running
        raise DomainError("idempotency_in_progress", "A request with this key is still running.")
    if row["fingerprint"] != print_:
        raise DomainError(
            "idempotency_conflict",
            "This Idempotency-Key was used with a different request body.",
            field="Idempotency-Key",
        )
    if row["state"] != "done":
        raise DomainError(
            "idempotency_in_progress",
            "A request with this Idempotency-Key is still being processed; retry shortly.",
        )
    return StoredResponse(int(row["status"]), str(row["body"]).encode())
