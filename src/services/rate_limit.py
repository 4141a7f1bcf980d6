"""Token bucket per organization and environment, kept in the shared database.

One UPSERT per request refills and spends atomically, so every gateway process that shares
the database shares the allowance exactly (spec 8: one allowance per organization).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from infra.clock import Clock
from infra.database import Database, greatest, least


@dataclass(frozen=True)
class RateDecision:
    allowed: bool
    limit: int
    remaining: int
    reset_seconds: int
    retry_after_seconds: int


class RateLimiter:
    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock
        lo, hi = least(db.dialect), greatest(db.dialect)
        # The refilled level is computed once in SQL; `allowed` records whether a token was taken.
        refilled = f"{lo}(?, rate_buckets.tokens + {hi}(0, ? - rate_buckets.updated_at) * ?)"
        self._spend = (
            "INSERT INTO rate_buckets (bucket, tokens, updated_at, allowed) VALUES (?, ?, ?, 1) "
            "ON CONFLICT (bucket) DO UPDATE SET "
            f"allowed = CASE WHEN {refilled} >= 1 THEN 1 ELSE 0 END, "
            f"tokens = CASE WHEN {refilled} >= 1 THEN {refilled} - 1 ELSE {refilled} END, "
            f"updated_at = {hi}(rate_buckets.updated_at, ?) "
            "RETURNING tokens, allowed"
        )
        with db.transaction() as cur:
            cur.execute(
                "CREATE TABLE IF NOT EXISTS rate_buckets (bucket TEXT PRIMARY KEY, "
                "tokens DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL, "
                "allowed INTEGER NOT NULL)"
            )

    def spend(self, bucket: str, rate: float, burst: int) -> RateDecision:
        now = self.clock.now()
        refill = (burst, now, rate)
        params = (bucket, burst - 1, now, *refill, *refill, *refill, *refill, now)
        row = self.db.statement(self._spend, params)[0]
        tokens, allowed = float(row["tokens"]), bool(row["allowed"])
        missing = max(0.0, 1.0 - tokens)
        return RateDecision(
            allowed=allowed,
            limit=burst,
            remaining=max(0, math.floor(tokens)),
            reset_seconds=max(0, math.ceil((burst - tokens) / rate)),
            retry_after_seconds=max(1, math.ceil(missing / rate)),
        )
