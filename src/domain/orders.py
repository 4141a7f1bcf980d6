"""Orders: one customer's domains and mailbox licenses, routed to a workspace (spec 3, Orders).

Every move is an event; the aggregate refuses a move from any state not listed here
(409 `order_state_conflict`).

| move (event)                       | from                                     | to                 |
| ---------------------------------- | ---------------------------------------- | ------------------ |
| `place` (Placed)                   | (new)                                    | `in_progress`      |
| `record_step` (StepCompleted)      | `in_progress`                            | `in_progress`      |
| `complete` (Completed)             | `in_progress`                            | `completed`        |
| `fail` (Failed)                    | `in_progress`, `action_required`         | `failed`           |
| `require_action` (ActionRequired)  | `in_progress`                            | `action_required`  |
| `resume` (Resumed)                 | `action_required`                        | `in_progress`      |
| `schedule_cancel` (CancelScheduled)| `in_progress`, `action_required`, `completed` | `cancel_scheduled` |
| `finalize_cancel` (Cancelled)      | `cancel_scheduled`                       | `cancelled`        |

`Placed` is the acceptance itself: the public event is `order.in_progress` (no created event).
"""

from __future__ import annotations

from typing import Any

from eventsourcing.domain import Aggregate, event

from domain.errors import DomainError

IN_PROGRESS = "in_progress"
COMPLETED = "completed"
FAILED = "failed"
ACTION_REQUIRED = "action_required"
CANCEL_SCHEDULED = "cancel_scheduled"
CANCELLED = "cancelled"

ACTIVE_STATES = (IN_PROGRESS, ACTION_REQUIRED, CANCEL_SCHEDULED, COMPLETED)
# Domains on an order in one of these states are still being set up or torn down.
BUSY_STATES = (IN_PROGRESS, ACTION_REQUIRED, CANCEL_SCHEDULED)

SOURCE_STATES: dict[str, tuple[str, ...]] = {
    "record_step": (IN_PROGRESS,),
    "complete": (IN_PROGRESS,),
    "fail": (IN_PROGRESS, ACTION_REQUIRED),
    "require_action": (IN_PROGRESS,),
    "resume": (ACTION_REQUIRED,),
    "schedule_cancel": (IN_PROGRESS, ACTION_REQUIRED, COMPLETED),
    "finalize_cancel": (CANCEL_SCHEDULED,),
}

ORDER = "order"
PURCHASE = "purchase"


class Order(Aggregate):
    @event("Placed")
    def __init__(
        self,
        *,
        org_id: str,
        environment: str,
        kind: str,
        destination: dict[str, Any] | None,
        customer_id: str | None,
        bundle_id: str | None,
        shape: dict[str, Any],
        domains: list[dict[str, Any]],
        personas: list[dict[str, str]],
        profile_picture_url: str | None,
        forwarding_url: str | None,
        price: dict[str, Any],
        charged_cents: int,
        created_at: float,
    ) -> None:
        self.org_id = org_id
        self.environment = environment
        self.kind = kind
        self.destination = destination
        self.customer_id = customer_id
        self.bundle_id = bundle_id
        self.shape = shape
        self.domains = domains
        self.personas = personas
        self.profile_picture_url = profile_picture_url
        self.forwarding_url = forwarding_url
        self.price = price
        self.charged_cents = charged_cents
        self.status = IN_PROGRESS
        self.steps_done: list[str] = []
        self.pending_action_id: str | None = None
        self.reason: str | None = None
        self.cancel_after: float | None = None
        self.refunded_cents = 0
        self.created_at = created_at
        self.updated_at = created_at
        self.completed_at: float | None = None
        self.cancelled_at: float | None = None

    @property
    def tenant(self) -> str:
        return f"{self.org_id}:{self.environment}"

    def _check(self, move: str) -> None:
        if self.status not in SOURCE_STATES[move]:
            raise DomainError(
                "order_state_conflict",
                f"An order in status '{self.status}' cannot {move.replace('_', ' ')}.",
                details={"status": self.status},
            )

    def can(self, move: str) -> bool:
        return self.status in SOURCE_STATES[move]

    # Public commands: validate, then call the recorded mutator with plain values.

    def record_step(self, step: str, domains: list[dict[str, Any]], at: float) -> None:
        self._check("record_step")
        if step in self.steps_done:
            raise DomainError("order_state_conflict", f"Step '{step}' already ran.")
        self._step_completed(step=step, domains=domains, at=at)

    def complete(self, domains: list[dict[str, Any]], at: float) -> None:
        self._check("complete")
        self._completed(domains=domains, at=at)

    def fail(self, reason: str, refund_cents: int, at: float) -> None:
        self._check("fail")
        self._failed(reason=reason, refund_cents=refund_cents, at=at)

    def require_action(self, action_id: str, reason: str, at: float) -> None:
        self._check("require_action")
        self._action_required(action_id=action_id, reason=reason, at=at)

    def resume(self, profile_picture_url: str | None, at: float) -> None:
        self._check("resume")
        self._resumed(profile_picture_url=profile_picture_url, at=at)

    def schedule_cancel(self, cancel_after: float, at: float) -> None:
        self._check("schedule_cancel")
        self._cancel_scheduled(cancel_after=cancel_after, at=at)

    def finalize_cancel(self, domains: list[dict[str, Any]], refund_cents: int, at: float) -> None:
        self._check("finalize_cancel")
        self._cancelled(domains=domains, refund_cents=refund_cents, at=at)

    @property
    def refundable_cents(self) -> int:
        """Money back on failure or cancellation before completion; a completed order was
        delivered, so its charge stands."""
        if self.completed_at is not None:
            return 0
        return self.charged_cents - self.refunded_cents

    # Recorded mutators: assignment only, they re-run on every replay.

    @event("StepCompleted")
    def _step_completed(self, *, step: str, domains: list[dict[str, Any]], at: float) -> None:
        self.steps_done = [*self.steps_done, step]
        self.domains = domains
        self.updated_at = at

    @event("Completed")
    def _completed(self, *, domains: list[dict[str, Any]], at: float) -> None:
        self.domains = domains
        self.status = COMPLETED
        self.completed_at = at
        self.updated_at = at

    @event("Failed")
    def _failed(self, *, reason: str, refund_cents: int, at: float) -> None:
        self.status = FAILED
        self.reason = reason
        self.refunded_cents += refund_cents
        self.domains = [{**d, "status": "failed"} for d in self.domains]
        self.updated_at = at

    @event("ActionRequired")
    def _action_required(self, *, action_id: str, reason: str, at: float) -> None:
        self.status = ACTION_REQUIRED
        self.pending_action_id = action_id
        self.reason = reason
        self.updated_at = at

    @event("Resumed")
    def _resumed(self, *, profile_picture_url: str | None, at: float) -> None:
        self.status = IN_PROGRESS
        self.profile_picture_url = profile_picture_url
        self.pending_action_id = None
        self.reason = None
        self.updated_at = at

    @event("CancelScheduled")
    def _cancel_scheduled(self, *, cancel_after: float, at: float) -> None:
        self.status = CANCEL_SCHEDULED
        self.cancel_after = cancel_after
        self.updated_at = at

    @event("Cancelled")
    def _cancelled(self, *, domains: list[dict[str, Any]], refund_cents: int, at: float) -> None:
        self.status = CANCELLED
        self.domains = domains
        self.refunded_cents += refund_cents
        self.cancelled_at = at
        self.updated_at = at
