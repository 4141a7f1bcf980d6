"""Token bucket per organization and environment, kept in the shared database.

One UPSERT per request refills and spends atomically, so every gateway process that shares
the database shares the allowance exactly (spec 8: one allowance per organization).

When the spend cannot be written (a full disk), the request is counted against a bucket in
this process's memory instead, with the same rate and burst: a read that needs no write goes
on being answered and still limited, rather than every request failing on the bucket's write.
Each gateway process then grants the allowance on its own, so N processes grant at most N
times it, only for as long as the store cannot be written (docs/resilience.md).
"""

from __future__ import annotations

import logging
import math
import threading
from typing import NamedTuple

from infra.clock import Clock
from infra.database import Database, greatest, least
from infra.storage_health import storage_full

log = logging.getLogger(__name__)


class RateDecision(NamedTuple):
    """One spend's outcome; built on every request, hence a tuple and figures on demand."""

    allowed: bool
    limit: int
    tokens: float  # left in the bucket after this request
    rate: float
    recorded: bool = True  # False: counted in this process's memory, the store being full

    @property
    def remaining(self) -> int:
        return max(0, math.floor(self.tokens))

    @property
    def reset_seconds(self) -> int:
        return max(0, math.ceil((self.limit - self.tokens) / self.rate))

    @property
    def retry_after_seconds(self) -> int:
        return max(1, math.ceil(max(0.0, 1.0 - self.tokens) / self.rate))


class MemoryBuckets:
    """The same token bucket as the UPSERT, in memory, for while the store cannot be written."""

    def __init__(self) -> None:
        self._buckets: dict[str, tuple[float, float]] = {}  # bucket -> (tokens, updated_at)
        self._lock = threading.Lock()

    def spend(self, bucket: str, rate: float, burst: int, now: float) -> RateDecision:
        with self._lock:
            tokens, updated_at = self._buckets.get(bucket, (float(burst), now))
            refilled = min(float(burst), tokens + max(0.0, now - updated_at) * rate)
            allowed = refilled >= 1
            left = refilled - 1 if allowed else refilled
            self._buckets[bucket] = (left, max(updated_at, now))
        return RateDecision(allowed, burst, left, rate, recorded=False)

    def forget(self) -> None:
        """The store takes spends again: it governs from now on."""
        with self._lock:
            self._buckets.clear()


class RateLimiter:
    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock
        self.fallback = MemoryBuckets()
        self._falling_back = False
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
        try:
            row = self.db.statement(self._spend, params)[0]
        except Exception as error:
            if not storage_full(error):
                raise
            if not self._falling_back:
                log.warning("rate buckets cannot be written (%s); counting in memory", error)
            self._falling_back = True
            return self.fallback.spend(bucket, rate, burst, now)
        if self._falling_back:
            log.warning("rate buckets written again; the shared allowance governs")
            self._falling_back = False
            self.fallback.forget()
        return RateDecision(bool(row["allowed"]), burst, float(row["tokens"]), rate)
