"""Pending actions (`act_`): an order blocked on partner input, and the input that unblocks it.

| move (event)        | from      | to         |
| ------------------- | --------- | ---------- |
| `__init__` (Opened) | (new)     | `pending`  |
| `resolve` (Resolved)| `pending` | `resolved` |
| `cancel` (Cancelled)| `pending` | `cancelled` (its order was cancelled or failed) |
"""

from __future__ import annotations

from typing import Any, ClassVar

from eventsourcing.domain import Aggregate, event

from domain.domains import NAMESERVERS_NOT_POINTED
from domain.errors import DomainError
from domain.order_steps import NAMESERVERS

PENDING = "pending"
RESOLVED = "resolved"
CANCELLED = "cancelled"
ACTION_STATUSES = (PENDING, RESOLVED, CANCELLED)

# What the partner must send to `POST /orders/pending/{id}/resolve`, per kind of action.
INPUT_FIELD = {"profile_picture_url": "profile_picture_url"}


class PendingAction(Aggregate):
    # Its events, made by `@event` below: named here so that code using them is checked.
    Opened: ClassVar[type[Aggregate.Event]]
    Cancelled: ClassVar[type[Aggregate.Event]]
    Resolved: ClassVar[type[Aggregate.Event]]

    @event("Opened")
    def __init__(
        self,
        *,
        org_id: str,
        environment: str,
        order_id: str,
        kind: str,
        field: str,
        message: str,
        details: dict[str, Any],
        created_at: float,
    ) -> None:
        self.org_id = org_id
        self.environment = environment
        self.order_id = order_id
        self.kind = kind
        self.field = field
        self.message = message
        self.details = details
        self.status = PENDING
        self.created_at = created_at
        self.resolved_at: float | None = None
        self.resolution: dict[str, Any] | None = None

    def reason_for(self, domain: str) -> str:
        """Why one of its order's domains waits on the partner, as its `domain.action_required`
        and its row in `GET /domains` say: `nameservers_not_pointed` for a domain waiting for
        its own nameservers, else the action's kind."""
        if self.kind == NAMESERVERS and domain in self.details.get("domains", []):
            return NAMESERVERS_NOT_POINTED
        return str(self.kind)

    @property
    def tenant(self) -> str:
        return f"{self.org_id}:{self.environment}"

    def resolve(self, resolution: dict[str, Any], at: float) -> None:
        if self.status != PENDING:
            raise DomainError(
                "order_state_conflict",
                f"This pending action is {self.status}; there is nothing to resolve.",
                details={"status": self.status},
            )
        self._resolved(resolution=resolution, at=at)

    def cancel(self, at: float) -> None:
        """Its order will not go on: the input is no longer needed (repeating is safe)."""
        if self.status == PENDING:
            self._cancelled(at=at)

    @event("Cancelled")
    def _cancelled(self, *, at: float) -> None:
        self.status = CANCELLED
        self.resolved_at = at

    @event("Resolved")
    def _resolved(self, *, resolution: dict[str, Any], at: float) -> None:
        self.status = RESOLVED
        self.resolution = resolution
        self.resolved_at = at
