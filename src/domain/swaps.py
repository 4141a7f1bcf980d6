"""A domain swap (`swp_`): one domain of an active order replaced, or its personas renamed.

Kinds: `standard` (the old domain is detached when the new one is live), `premium` (the old
domain stays warm, still sending, for `PREMIUM_WARM_DAYS` and is detached then) and
`user_names` (the inboxes of a warm domain get new personas; the domain stays).

| move (event)                        | from                             | to                |
| ----------------------------------- | -------------------------------- | ----------------- |
| `__init__` (Created)                | (new)                            | `created`         |
| `start` (Started)                   | `created`                        | `in_progress`     |
| `record_step` (StepCompleted)       | `in_progress`                    | `in_progress`     |
| `complete` (Completed)              | `in_progress`                    | `completed`       |
| `fail` (Failed)                     | `created`, `in_progress`, `action_required` | `failed` |
| `require_action` (ActionRequired)   | `in_progress`                    | `action_required` |
| `resume` (Resumed)                  | `action_required`                | `in_progress`     |
| `detach_old_domain` (OldDomainDetached) | `completed` premium, warm period over | `completed` |
"""

from __future__ import annotations

from typing import ClassVar

from eventsourcing.domain import Aggregate, event

from domain.creation_ids import created_as
from domain.errors import DomainError
from domain.orders import DomainItem

STANDARD = "standard"
PREMIUM = "premium"
USER_NAMES = "user_names"
KINDS = (STANDARD, PREMIUM, USER_NAMES)

CREATED = "created"
IN_PROGRESS = "in_progress"
COMPLETED = "completed"
FAILED = "failed"
ACTION_REQUIRED = "action_required"
STATUSES = (CREATED, IN_PROGRESS, COMPLETED, FAILED, ACTION_REQUIRED)
OPEN_STATES = (CREATED, IN_PROGRESS, ACTION_REQUIRED)

PREMIUM_WARM_DAYS = 14

SOURCE_STATES: dict[str, tuple[str, ...]] = {
    "start": (CREATED,),
    "record_step": (IN_PROGRESS,),
    "complete": (IN_PROGRESS,),
    "fail": (CREATED, IN_PROGRESS, ACTION_REQUIRED),
    "require_action": (IN_PROGRESS,),
    "resume": (ACTION_REQUIRED,),
    "detach_old_domain": (COMPLETED,),
}


class Swap(Aggregate):
    # Its events, made by `@event` below: named here so that code using them is checked.
    Created: ClassVar[type[Aggregate.Created]]
    Started: ClassVar[type[Aggregate.Event]]
    StepCompleted: ClassVar[type[Aggregate.Event]]
    Completed: ClassVar[type[Aggregate.Event]]
    Failed: ClassVar[type[Aggregate.Event]]
    ActionRequired: ClassVar[type[Aggregate.Event]]
    Resumed: ClassVar[type[Aggregate.Event]]
    OldDomainDetached: ClassVar[type[Aggregate.Event]]

    create_id = created_as("swap")

    @event("Created")
    def __init__(
        self,
        *,
        org_id: str,
        environment: str,
        kind: str,
        order_id: str,
        domain: str,
        item: DomainItem,
        personas: list[dict[str, str]],
        price_cents: int,
        charged_cents: int,
        created_at: float,
    ) -> None:
        self.org_id = org_id
        self.environment = environment
        self.kind = kind
        self.order_id = order_id
        self.domain = domain
        # The domain item being provisioned: the new domain, or (user_names) the same domain
        # with its renamed inboxes. It replaces the old item on the order at completion.
        self.item = item
        self.personas = personas
        self.price_cents = price_cents
        self.charged_cents = charged_cents
        self.refunded_cents = 0
        self.status = CREATED
        self.steps_done: list[str] = []
        self.reason: str | None = None
        self.warm_until: float | None = None
        self.old_domain_detached_at: float | None = None
        self.created_at = created_at
        self.updated_at = created_at
        self.completed_at: float | None = None

    @property
    def tenant(self) -> str:
        return f"{self.org_id}:{self.environment}"

    @property
    def is_open(self) -> bool:
        return self.status in OPEN_STATES

    def _check(self, move: str) -> None:
        if self.status not in SOURCE_STATES[move]:
            raise DomainError(
                "conflict",
                f"A swap in status '{self.status}' cannot {move.replace('_', ' ')}.",
                details={"status": self.status},
            )

    # Public commands: validate, then record plain values.

    def start(self, at: float) -> None:
        self._check("start")
        self._started(at=at)

    def record_step(self, step: str, item: DomainItem, at: float) -> None:
        self._check("record_step")
        if step in self.steps_done:
            raise DomainError("conflict", f"Step '{step}' already ran.")
        self._step_completed(step=step, item=item, at=at)

    def complete(self, item: DomainItem, warm_until: float | None, at: float) -> None:
        self._check("complete")
        self._completed(item=item, warm_until=warm_until, at=at)

    def fail(self, reason: str, refund_cents: int, at: float) -> None:
        self._check("fail")
        self._failed(reason=reason, refund_cents=refund_cents, at=at)

    def require_action(self, reason: str, at: float) -> None:
        self._check("require_action")
        self._action_required(reason=reason, at=at)

    def resume(self, at: float) -> None:
        self._check("resume")
        self._resumed(at=at)

    def detach_old_domain(self, at: float) -> None:
        self._check("detach_old_domain")
        if self.warm_until is None or self.old_domain_detached_at is not None:
            raise DomainError("conflict", "This swap keeps no warm domain.")
        self._old_domain_detached(at=at)

    @property
    def refundable_cents(self) -> int:
        return self.charged_cents - self.refunded_cents

    # Recorded mutators: assignment only, they re-run on every replay.

    @event("Started")
    def _started(self, *, at: float) -> None:
        self.status = IN_PROGRESS
        self.updated_at = at

    @event("StepCompleted")
    def _step_completed(self, *, step: str, item: DomainItem, at: float) -> None:
        self.steps_done = [*self.steps_done, step]
        self.item = item
        self.updated_at = at

    @event("Completed")
    def _completed(self, *, item: DomainItem, warm_until: float | None, at: float) -> None:
        self.status = COMPLETED
        self.item = item
        self.warm_until = warm_until
        self.reason = None
        self.completed_at = at
        self.updated_at = at

    @event("Failed")
    def _failed(self, *, reason: str, refund_cents: int, at: float) -> None:
        self.status = FAILED
        self.reason = reason
        self.refunded_cents += refund_cents
        self.updated_at = at

    @event("ActionRequired")
    def _action_required(self, *, reason: str, at: float) -> None:
        self.status = ACTION_REQUIRED
        self.reason = reason
        self.updated_at = at

    @event("Resumed")
    def _resumed(self, *, at: float) -> None:
        self.status = IN_PROGRESS
        self.reason = None
        self.updated_at = at

    @event("OldDomainDetached")
    def _old_domain_detached(self, *, at: float) -> None:
        self.old_domain_detached_at = at
        self.updated_at = at
