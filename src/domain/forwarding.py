"""A forwarding job (`fwj_`): point domains' web traffic at one URL.

Domains already forwarding there are `completed` at submission; the rest are `pending` until
the job finishes: each then lands in `applied` or `failed` (the target does not resolve).
Job status: `in_progress`, then `completed` (something applied or nothing pending) or `failed`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from eventsourcing.domain import Aggregate, event

IN_PROGRESS = "in_progress"
COMPLETED = "completed"
FAILED = "failed"


class ForwardingJob(Aggregate):
    # Its events, made by `@event` below: named here so that code using them is checked.
    Submitted: ClassVar[type[Aggregate.Event]]
    DomainStatusesNoted: ClassVar[type[Aggregate.Event]]
    Finished: ClassVar[type[Aggregate.Event]]

    # The status of each pending domain (`dom_` id) when the job finished, for the `domain.*`
    # events it fires; recorded just before `Finished`. None on jobs finished before it was.
    domain_statuses: dict[str, str] | None = None

    @event("Submitted")
    def __init__(
        self,
        *,
        org_id: str,
        environment: str,
        forwarding_url: str,
        completed: list[dict[str, Any]],
        pending: list[dict[str, Any]],
        created_at: float,
    ) -> None:
        self.org_id = org_id
        self.environment = environment
        self.forwarding_url = forwarding_url
        self.completed = completed
        self.pending = pending
        self.failed: list[dict[str, Any]] = []
        self.applied: list[dict[str, Any]] = []
        self.reason: str | None = None
        self.status = IN_PROGRESS if pending else COMPLETED
        self.created_at = created_at
        self.updated_at = created_at
        self.completed_at: float | None = None if pending else created_at

    @property
    def tenant(self) -> str:
        return f"{self.org_id}:{self.environment}"

    def finish(
        self, resolves: bool, reason: str | None, domain_statuses: dict[str, str], at: float
    ) -> None:
        if self.status != IN_PROGRESS:
            return
        self._domain_statuses_noted(statuses=domain_statuses, at=at)
        self._finished(resolves=resolves, reason=reason, at=at)

    @event("DomainStatusesNoted")
    def _domain_statuses_noted(self, *, statuses: dict[str, str], at: float) -> None:
        self.domain_statuses = statuses

    @event("Finished")
    def _finished(self, *, resolves: bool, reason: str | None, at: float) -> None:
        if resolves:
            self.applied = list(self.pending)
            self.completed = [*self.completed, *self.pending]
            self.status = COMPLETED
        else:
            self.failed = list(self.pending)
            self.status = FAILED
        self.pending = []
        self.reason = reason
        self.completed_at = at
        self.updated_at = at
