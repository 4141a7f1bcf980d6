"""A pool replacement (`prp_`): a burned assigned pool domain swapped for an available one.

Recorded with its outcome in one step: `completed` (the new domain is assigned to the same
workspace and client, the burned one retired) or `failed` (no available pool domain).
"""

from __future__ import annotations

from typing import ClassVar

from eventsourcing.domain import Aggregate, event

COMPLETED = "completed"
FAILED = "failed"


class PoolReplacement(Aggregate):
    # Its events, made by `@event` below: named here so that code using them is checked.
    Finished: ClassVar[type[Aggregate.Event]]

    @event("Finished")
    def __init__(
        self,
        *,
        org_id: str,
        environment: str,
        job_id: str | None,
        workspace_id: str | None,
        client_id: int | None,
        burned_domain: dict[str, str],
        replacement_domain: dict[str, str] | None,
        status: str,
        reason: str | None,
        at: float,
        ends_replacement_needed: bool = False,  # absent from events stored before it
    ) -> None:
        self.org_id = org_id
        self.environment = environment
        self.job_id = job_id
        self.workspace_id = workspace_id
        self.client_id = client_id
        self.burned_domain = burned_domain  # {"id": dom_..., "domain": name}
        self.replacement_domain = replacement_domain
        self.status = status
        self.reason = reason
        self.created_at = at
        self.completed_at = at
        # A replacement that completed for a domain an earlier one could not replace.
        self.ends_replacement_needed = ends_replacement_needed

    @property
    def tenant(self) -> str:
        return f"{self.org_id}:{self.environment}"
