"""A pool reservation (`pcl_`): an attach of an exact quantity of pool domains to a workspace.

`in_progress` from the request until final success or failure (spec 9, 2026-07-28): the
domains are `reserved` meanwhile. `complete` (Completed) assigns them; `fail` (Failed) puts them
back. The pool worker completes them: sandbox ones at once, live ones a step later.
"""

from __future__ import annotations

from typing import Any, ClassVar

from eventsourcing.domain import Aggregate, event

from domain.creation_ids import created_as
from domain.errors import DomainError

IN_PROGRESS = "in_progress"
COMPLETED = "completed"
FAILED = "failed"


class PoolReservation(Aggregate):
    # Its events, made by `@event` below: named here so that code using them is checked.
    Requested: ClassVar[type[Aggregate.Event]]
    Completed: ClassVar[type[Aggregate.Event]]
    Failed: ClassVar[type[Aggregate.Event]]

    create_id = created_as("pool_reservation")

    @event("Requested")
    def __init__(
        self,
        *,
        org_id: str,
        environment: str,
        workspace_id: str,
        client_id: int | None,
        quantity: int,
        domains: list[dict[str, Any]],
        at: float,
    ) -> None:
        self.org_id = org_id
        self.environment = environment
        self.workspace_id = workspace_id
        self.client_id = client_id
        self.quantity = quantity
        self.domains = domains  # [{"id": dom_..., "domain": name}]
        self.status = IN_PROGRESS
        self.reason: str | None = None
        self.created_at = at
        self.updated_at = at
        self.completed_at: float | None = None

    @property
    def tenant(self) -> str:
        return f"{self.org_id}:{self.environment}"

    def _check_open(self) -> None:
        if self.status != IN_PROGRESS:
            raise DomainError(
                "pool_state_conflict",
                f"The reservation is already {self.status}.",
                details={"status": self.status},
            )

    def complete(self, at: float) -> None:
        self._check_open()
        self._completed(at=at)

    def fail(self, reason: str, at: float) -> None:
        self._check_open()
        self._failed(reason=reason, at=at)

    @event("Completed")
    def _completed(self, *, at: float) -> None:
        self.status = COMPLETED
        self.completed_at = at
        self.updated_at = at

    @event("Failed")
    def _failed(self, *, reason: str, at: float) -> None:
        self.status = FAILED
        self.reason = reason
        self.completed_at = at
        self.updated_at = at
