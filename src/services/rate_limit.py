"""Token bucket per organization and environment, kept in the shared database.

One UPSERT per request refills and spends atomically, so every gateway process that shares
the database shares the allowance exactly (spec 8: one allowance per organization).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from infra.clock import Clock
from infra.database import Database, greatest, least


class RateDecision(NamedTuple):
    """One spend's outcome; built on every request, hence a tuple and figures on demand."""

    allowed: bool
    limit: int
    tokens: float  # left in the bucket after this request
    rate: float

    @property
    def remaining(self) -> int:
        return max(0, math.floor(self.tokens))

    @property
    def reset_seconds(self) -> int:
        return max(0, math.ceil((self.limit - self.tokens) / self.rate))

    @property
    def retry_after_seconds(self) -> int:
        return max(1, math.ceil(max(0.0, 1.0 - self.tokens) / self.rate))


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
        return RateDecision(bool(row["allowed"]), burst, float(row["tokens"]), rate)
