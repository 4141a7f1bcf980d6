"""A burned-domain job (`brj_`): the mail provider reported a domain burned.

Started by the fulfillment team (gRPC) or the pool; it records the burned result on the
domain's pool record (no longer pool-eligible) and, for a pool-assigned domain, names the pool
replacement (`prp_`) it started. It finishes in the step that starts it.
"""

from __future__ import annotations

from typing import ClassVar

from eventsourcing.domain import Aggregate, event

COMPLETED = "completed"


class BurnedDomainJob(Aggregate):
    # Its events, made by `@event` below: named here so that code using them is checked.
    Started: ClassVar[type[Aggregate.Event]]
    Completed: ClassVar[type[Aggregate.Event]]

    @event("Started")
    def __init__(
        self,
        *,
        org_id: str,
        environment: str,
        domain: dict[str, str | None],
        operator: str | None,
        reason: str,
        at: float,
    ) -> None:
        self.org_id = org_id
        self.environment = environment
        self.domain = domain  # {"id": dom_..., "domain": name}
        self.operator = operator
        self.reason = reason
        self.status = "in_progress"
        self.replacement_id: str | None = None
        self.pool_condition: str | None = None
        self.created_at = at
        self.updated_at = at
        self.completed_at: float | None = None

    @property
    def tenant(self) -> str:
        return f"{self.org_id}:{self.environment}"

    def complete(self, pool_condition: str | None, replacement_id: str | None, at: float) -> None:
        self._completed(pool_condition=pool_condition, replacement_id=replacement_id, at=at)

    @event("Completed")
    def _completed(self, *, pool_condition: str | None, replacement_id: str | None, at: float) -> None:
        self.status = COMPLETED
        self.pool_condition = pool_condition
        self.replacement_id = replacement_id
        self.completed_at = at
        self.updated_at = at
