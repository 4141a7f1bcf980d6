"""Optimistic concurrency: a load-decide-save is run again when another writer saved first."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from eventsourcing.persistence import RecordConflictError

T = TypeVar("T")
CONFLICT_ATTEMPTS = 12


def retry_conflicts(run: Callable[[], T], attempts: int = CONFLICT_ATTEMPTS) -> T:
    """Re-run a load-decide-save use case when another writer saved the same aggregate first
    (optimistic concurrency): the second attempt decides on fresh state.

    Between attempts it waits a short random, growing delay: twenty requests racing for one
    aggregate otherwise retry in lockstep and the last ones run out of attempts (a 500)."""
    for attempt in range(attempts - 1):
        try:
            return run()
        except RecordConflictError:
            time.sleep(random.uniform(0, 0.005 * 2 ** min(attempt, 6)))
    return run()
