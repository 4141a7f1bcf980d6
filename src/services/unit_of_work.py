"""The unit of work every use case writes through: aggregates saved together in one atomic
commit, a load-decide-save run again when another writer saved first, and the answer given
only once the read models show what was saved (read-your-writes: a partner who lists right
after a POST sees its row)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar
from uuid import UUID

from eventsourcing.domain import Aggregate
from eventsourcing.persistence import Recording

from infra.conflicts import CONFLICT_ATTEMPTS, retry_conflicts
from infra.store import EventStore
from projections.runner import ReadModels

T = TypeVar("T")


class UnitOfWork:
    def __init__(self, store: EventStore, read_models: ReadModels) -> None:
        self.store = store
        self.read_models = read_models

    def save(self, *aggregates: Aggregate) -> list[Recording[UUID]]:
        """One atomic commit of every pending event of these aggregates, then read-your-writes."""
        recordings = self.store.save(*aggregates)
        if recordings:
            self.read_models.wait_for(recordings[-1].notification.id)
        return recordings

    def retrying(self, decide: Callable[[], T], attempts: int = CONFLICT_ATTEMPTS) -> T:
        """Runs a load-decide-save, again on fresh state when another writer saved first."""
        return retry_conflicts(decide, attempts)

    def wait_for_stored(self) -> None:
        """Read-your-writes for an answer read from what a worker saved without waiting."""
        self.read_models.wait_for_stored(self.store.recorder)
