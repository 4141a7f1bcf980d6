"""A pool release (`prl_`): assigned pool domains given back to the pool.

`in_progress` while the domains are `releasing`; `complete` (Completed) puts them in
`idle_quarantined`. The pool worker completes them: sandbox ones at once, live ones a step later.
"""

from __future__ import annotations

from typing import Any, ClassVar

from eventsourcing.domain import Aggregate, event

from domain.errors import DomainError

IN_PROGRESS = "in_progress"
COMPLETED = "completed"


class PoolRelease(Aggregate):
    # Its events, made by `@event` below: named here so that code using them is checked.
    Requested: ClassVar[type[Aggregate.Event]]
    Completed: ClassVar[type[Aggregate.Event]]

    @event("Requested")
    def __init__(
        self, *, org_id: str, environment: str, domains: list[dict[str, Any]], at: float
    ) -> None:
        self.org_id = org_id
        self.environment = environment
        self.domains = domains  # [{"id": dom_..., "domain": name}]
        self.status = IN_PROGRESS
        self.created_at = at
        self.updated_at = at
        self.completed_at: float | None = None

    @property
    def tenant(self) -> str:
        return f"{self.org_id}:{self.environment}"

    def complete(self, at: float) -> None:
        if self.status != IN_PROGRESS:
            raise DomainError(
                "pool_state_conflict",
                f"The release is already {self.status}.",
                details={"status": self.status},
            )
        self._completed(at=at)

    @event("Completed")
    def _completed(self, *, at: float) -> None:
        self.status = COMPLETED
        self.completed_at = at
        self.updated_at = at
