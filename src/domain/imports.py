"""A domain import job (`imp_`): existing customer domains brought under our DNS.

Each domain moves `queued` -> `awaiting_nameservers` -> `completed`, or to `failed`. The job is
`in_progress` until first processed, `action_required` while any domain waits for its
nameservers, then `completed` (at least one domain imported) or `failed` (none was).
"""

from __future__ import annotations

import uuid
from typing import Any, ClassVar

from eventsourcing.domain import Aggregate, event

IN_PROGRESS = "in_progress"
COMPLETED = "completed"
FAILED = "failed"
ACTION_REQUIRED = "action_required"
OPEN_STATES = (IN_PROGRESS, ACTION_REQUIRED)

QUEUED = "queued"
AWAITING = "awaiting_nameservers"
ITEM_DONE = "completed"
ITEM_FAILED = "failed"


def status_of(items: list[dict[str, Any]]) -> str:
    states = {item["status"] for item in items}
    if QUEUED in states:
        return IN_PROGRESS
    if AWAITING in states:
        return ACTION_REQUIRED
    return COMPLETED if ITEM_DONE in states else FAILED


class ImportJob(Aggregate):
    # Its events, made by `@event` below: named here so that code using them is checked.
    Submitted: ClassVar[type[Aggregate.Event]]
    Progressed: ClassVar[type[Aggregate.Event]]

    @event("Submitted")
    def __init__(
        self,
        *,
        org_id: str,
        environment: str,
        workspace_id: str | None,
        mode: str,
        items: list[dict[str, Any]],
        nameserver_groups: list[dict[str, Any]],
        created_at: float,
    ) -> None:
        self.org_id = org_id
        self.environment = environment
        self.workspace_id = workspace_id
        self.mode = mode
        self.items = items
        self.nameserver_groups = nameserver_groups
        self.status = IN_PROGRESS
        self.created_at = created_at
        self.updated_at = created_at
        self.completed_at: float | None = None

    @property
    def tenant(self) -> str:
        return f"{self.org_id}:{self.environment}"

    @property
    def is_open(self) -> bool:
        return self.status in OPEN_STATES

    def progress(self, items: list[dict[str, Any]], at: float) -> bool:
        """Record the domains' new states; False (nothing recorded) when nothing changed."""
        if items == self.items:
            return False
        status = status_of(items)
        completed_at = at if status in (COMPLETED, FAILED) else None
        self._progressed(
            items=items,
            status=status,
            previous=self.status,
            completed_at=completed_at,
            at=at,
            nameserver_groups=_groups_to_point(self.nameserver_groups, items),
        )
        return True

    @event("Progressed")
    def _progressed(
        self,
        *,
        items: list[dict[str, Any]],
        status: str,
        previous: str,
        completed_at: float | None,
        at: float,
        # Events stored before this field existed carry none and change no group.
        nameserver_groups: list[dict[str, Any]] | None = None,
    ) -> None:
        self.items = items
        self.status = status
        self.completed_at = completed_at
        self.updated_at = at
        if nameserver_groups is not None:
            self.nameserver_groups = nameserver_groups


def _groups_to_point(
    groups: list[dict[str, Any]], items: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The nameservers the customer sets at their registrar (spec 2.6), for the names the job
    did not fail: a name it refused (premium, outside the catalog, owned already) needs none."""
    failed = {i["domain"] for i in items if i["status"] == ITEM_FAILED}
    kept = [{**g, "domains": [d for d in g["domains"] if d not in failed]} for g in groups]
    return [group for group in kept if group["domains"]]


_IMPORTED_NAMESPACE = uuid.UUID("0d3f9a52-6c1e-4b7a-8e25-3f4c9d7b1a60")


class ImportedName(Aggregate):
    """A name imported into one tenant's inventory, recorded once: its id derives from tenant
    and name, so of two imports racing for the same name only one save stores it (the other is
    a version conflict, and its retry finds the name imported)."""
    # Its events, made by `@event` below: named here so that code using them is checked.
    Recorded: ClassVar[type[Aggregate.Event]]


    @staticmethod
    def create_id(*_: Any, org_id: str, environment: str, name: str, **__: Any) -> uuid.UUID:
        return imported_name_id(org_id, environment, name)

    @event("Recorded")
    def __init__(self, *, org_id: str, environment: str, name: str, domain_id: str) -> None:
        self.org_id = org_id
        self.environment = environment
        self.name = name
        self.domain_id = domain_id


def imported_name_id(org_id: str, environment: str, name: str) -> uuid.UUID:
    return uuid.uuid5(_IMPORTED_NAMESPACE, f"{org_id}:{environment}:{name}")
