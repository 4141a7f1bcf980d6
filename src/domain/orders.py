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
| `schedule_cancel` (CancelScheduled)| `in_progress`, `action_required`, `completed` (not a purchase) | `cancel_scheduled` |
| `finalize_cancel` (Cancelled)      | `cancel_scheduled`                       | `cancelled`        |
| `swap_domain` (DomainSwapped)      | `completed`                              | `completed`        |
| `detach_warm_domain` (WarmDomainDetached) | any                               | (unchanged)        |
| `rename_inboxes` (InboxesRenamed)  | `completed`                              | `completed`        |
| `set_domain_forwarding` (DomainForwardingSet) | any                           | (unchanged)        |
| `claim_for_swap` (DomainSwapClaimed) | `completed`                            | `completed`        |
| `fail_step` (StepFailed)           | `in_progress`                            | `in_progress`      |
| `retry_step` (StepRetried)         | `in_progress`                            | `in_progress`      |

`StepFailed` and `StepRetried` come from the fulfillment team (gRPC): a failed step holds the
order (the worker does not advance it) until it is retried, reported done, or the order fails.

A completed purchase cannot be cancelled: its domains are registered and the organization's,
so there is nothing left to stop. Cancelling an unfinished order refunds what it has not
delivered: a domain it already registered stays the organization's (its registration charge
stands), one it had not registered yet leaves the order and is refunded.

`Placed` is the acceptance itself: the public event is `order.in_progress` (no created event).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from eventsourcing.domain import Aggregate, event

from domain.creation_ids import created_as
from domain.errors import DomainError
from domain.order_payloads import BOUGHT_SOURCES as BOUGHT_SOURCES
from domain.order_payloads import ITEM_SOURCES as ITEM_SOURCES
from domain.order_payloads import DestinationItem as DestinationItem
from domain.order_payloads import DomainItem as DomainItem
from domain.order_payloads import InboxItem as InboxItem
from domain.order_payloads import ItemSource as ItemSource
from domain.order_payloads import OrderShape as OrderShape
from domain.order_payloads import Price as Price
from domain.order_payloads import PriceLine as PriceLine

IN_PROGRESS = "in_progress"
COMPLETED = "completed"
FAILED = "failed"
AVAILABLE = "available"  # a domain item back in its inventory
ACTION_REQUIRED = "action_required"
CANCEL_SCHEDULED = "cancel_scheduled"
CANCELLED = "cancelled"

ACTIVE_STATES = (IN_PROGRESS, ACTION_REQUIRED, CANCEL_SCHEDULED, COMPLETED)
# Domains on an order in one of these states are still being set up or torn down.
BUSY_STATES = (IN_PROGRESS, ACTION_REQUIRED, CANCEL_SCHEDULED)


def shown_item_status(order_status: str, item: DomainItem) -> str:
    """A domain item's status as partners see it: while its order waits on them, a domain not
    yet live needs their attention too (spec 2.4 `action_required`), in the order's view and
    in the domain list alike."""
    status = str(item.get("status") or IN_PROGRESS)
    if order_status == ACTION_REQUIRED and status == IN_PROGRESS:
        return ACTION_REQUIRED
    return status


SOURCE_STATES: dict[str, tuple[str, ...]] = {
    "record_step": (IN_PROGRESS,),
    "complete": (IN_PROGRESS,),
    "fail": (IN_PROGRESS, ACTION_REQUIRED),
    "require_action": (IN_PROGRESS,),
    "resume": (ACTION_REQUIRED,),
    "schedule_cancel": (IN_PROGRESS, ACTION_REQUIRED, COMPLETED),
    "finalize_cancel": (CANCEL_SCHEDULED,),
    "fail_step": (IN_PROGRESS,),
    "retry_step": (IN_PROGRESS,),
}

ORDER = "order"
PURCHASE = "purchase"
def never_registered(item: DomainItem) -> bool:
    """A domain this order was to register but has not yet: not the organization's."""
    return item.get("source") in BOUGHT_SOURCES and not item.get("registered")


class Order(Aggregate):
    # Its events, made by `@event` below: named here so that code using them is checked.
    Placed: ClassVar[type[Aggregate.Event]]
    StepCompleted: ClassVar[type[Aggregate.Event]]
    StepFailed: ClassVar[type[Aggregate.Event]]
    StepRetried: ClassVar[type[Aggregate.Event]]
    Completed: ClassVar[type[Aggregate.Event]]
    Failed: ClassVar[type[Aggregate.Event]]
    ActionRequired: ClassVar[type[Aggregate.Event]]
    Resumed: ClassVar[type[Aggregate.Event]]
    DomainSwapped: ClassVar[type[Aggregate.Event]]
    DomainSwapClaimed: ClassVar[type[Aggregate.Event]]
    WarmDomainDetached: ClassVar[type[Aggregate.Event]]
    DomainLapsed: ClassVar[type[Aggregate.Event]]
    InboxesRenamed: ClassVar[type[Aggregate.Event]]
    DomainForwardingSet: ClassVar[type[Aggregate.Event]]
    CancelScheduled: ClassVar[type[Aggregate.Event]]
    Cancelled: ClassVar[type[Aggregate.Event]]

    # Set by StepFailed, cleared by StepRetried or StepCompleted; class defaults, so orders
    # placed before steps could fail read as not held. Internal: not in the partner's view.
    failed_step: str | None = None
    step_failure: str | None = None
    # The swap that last took each domain (`swp_` id by name), saved with the swap's acceptance
    # so two concurrent swaps of one domain race on this order's version. Internal;
    # None on orders that never had a swap.
    swap_claims: dict[str, str] | None = None

    create_id = created_as("order")

    @event("Placed")
    def __init__(
        self,
        *,
        org_id: str,
        environment: str,
        kind: str,
        destination: DestinationItem | None,
        customer_id: str | None,
        bundle_id: str | None,
        shape: OrderShape,
        domains: list[DomainItem],
        personas: list[dict[str, str]],
        profile_picture_url: str | None,
        forwarding_url: str | None,
        price: Price,
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
        # The status a cancellation found: its domains keep showing it during the grace window.
        self.cancelled_from: str | None = None
        self.refunded_cents = 0
        self.created_at = created_at
        self.updated_at = created_at
        self.completed_at: float | None = None
        self.cancelled_at: float | None = None
        # Old domains a premium swap keeps sending until their `warm_until` (domain/swaps.py).
        self.warm_domains: list[DomainItem] = []

    @property
    def tenant(self) -> str:
        return f"{self.org_id}:{self.environment}"

    @property
    def items_shown_as(self) -> str:
        """The order status its domain items are shown against (`shown_item_status`): during
        a cancellation's grace window, the status it had, so a domain waiting on the partner
        does not turn `in_progress`."""
        if self.status == CANCEL_SCHEDULED and self.cancelled_from is not None:
            return self.cancelled_from
        return self.status

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

    def record_step(self, step: str, domains: list[DomainItem], at: float) -> None:
        self._check("record_step")
        if step in self.steps_done:
            raise DomainError("order_state_conflict", f"Step '{step}' already ran.")
        self._step_completed(step=step, domains=domains, at=at)

    def fail_step(self, step: str, reason: str, at: float) -> None:
        self._check("fail_step")
        if step in self.steps_done:
            raise DomainError("order_state_conflict", f"Step '{step}' already ran.")
        self._step_failed(step=step, reason=reason, at=at)

    def retry_step(self, step: str, at: float) -> None:
        self._check("retry_step")
        if self.failed_step != step:
            raise DomainError(
                "order_state_conflict",
                f"Step '{step}' has not failed.",
                details={"failed_step": self.failed_step},
            )
        self._step_retried(step=step, at=at)

    def complete(self, domains: list[DomainItem], at: float) -> None:
        self._check("complete")
        self._completed(domains=domains, at=at)

    def fail(
        self, reason: str, refund_cents: int, at: float, failed_domains: Sequence[str] = ()
    ) -> None:
        """Every domain the order was buying fails with it (refunded, never the
        organization's), and so do `failed_domains`, the ones that broke it; a domain the
        organization already owned, not at fault, goes back to its inventory `available`."""
        self._check("fail")
        at_fault = set(failed_domains)
        domains: list[DomainItem] = [
            {**d, "status": FAILED}
            if d["domain"] in at_fault or d.get("source") in BOUGHT_SOURCES
            else {**d, "status": AVAILABLE}
            for d in self.domains
        ]
        self._failed(reason=reason, refund_cents=refund_cents, at=at, domains=domains)

    def require_action(self, action_id: str, reason: str, at: float) -> None:
        self._check("require_action")
        self._action_required(action_id=action_id, reason=reason, at=at)

    def resume(self, profile_picture_url: str | None, at: float) -> None:
        self._check("resume")
        self._resumed(profile_picture_url=profile_picture_url, at=at)

    def schedule_cancel(self, cancel_after: float, at: float) -> None:
        self._check("schedule_cancel")
        if self.kind == PURCHASE and self.status == COMPLETED:
            raise DomainError(
                "order_state_conflict",
                "A completed purchase cannot be cancelled: its domains are registered and "
                "yours. Remove them from a later order or let auto_renew lapse instead.",
                details={"status": self.status, "kind": self.kind},
            )
        self._cancel_scheduled(cancel_after=cancel_after, at=at)

    def finalize_cancel(self, domains: list[DomainItem], refund_cents: int, at: float) -> None:
        self._check("finalize_cancel")
        self._cancelled(domains=domains, refund_cents=refund_cents, at=at)

    # Swaps (domain/swaps.py) change the domains of a completed order.

    def swap_domain(
        self,
        old_domain: str,
        new_item: DomainItem,
        warm_until: float | None,
        swap_id: str,
        at: float,
    ) -> None:
        """Put `new_item` where `old_domain` was; the old one is detached now, or kept warm
        until `warm_until` (premium)."""
        if self.status != COMPLETED:
            raise DomainError(
                "order_state_conflict",
                f"Only a completed order's domains can be swapped (this one is {self.status}).",
                details={"status": self.status},
            )
        old = self.domain_item(old_domain)
        domains = [new_item if item is old else item for item in self.domains]
        warm = list(self.warm_domains)
        detached: DomainItem | None = None
        if warm_until is not None:
            warm.append({**old, "warm_until": warm_until, "swap_id": swap_id})
        else:
            detached = {**old, "status": "available", "inboxes": [], "swap_id": swap_id}
        self._domain_swapped(
            domains=domains, warm_domains=warm, detached_domain=detached, swap_id=swap_id, at=at
        )

    def claim_for_swap(self, domain: str, swap_id: str, at: float) -> None:
        """A swap of `domain` was accepted (the caller checked no other one is open)."""
        if self.status != COMPLETED:
            raise DomainError(
                "order_state_conflict",
                f"Only a completed order's domains can be swapped (this one is {self.status}).",
                details={"status": self.status},
            )
        self.held_item(domain)
        claims = {**(self.swap_claims or {}), domain: swap_id}
        self._domain_swap_claimed(domain=domain, swap_id=swap_id, claims=claims, at=at)

    def swap_claimed_by(self, domain: str) -> str | None:
        """The `swp_` id of the swap that last took this domain, if any."""
        return (self.swap_claims or {}).get(domain)

    def detach_warm_domain(self, domain: str, at: float) -> None:
        """The warm period of a premium swap's old domain is over."""
        found = [item for item in self.warm_domains if item["domain"] == domain]
        if not found:
            raise DomainError("conflict", f"{domain} is not kept warm on this order.")
        warm = [item for item in self.warm_domains if item["domain"] != domain]
        detached: DomainItem = {**found[0], "status": "available", "inboxes": []}
        self._warm_domain_detached(warm_domains=warm, detached_domain=detached, at=at)

    def drop_lapsed_domain(self, domain: str, at: float) -> bool:
        """A domain whose registration lapsed (auto_renew off, decisions.md 6) leaves the
        order, whether it served on it or was kept warm. Whether the order held it."""
        item = next((i for i in self.held_items if i["domain"] == domain), None)
        if item is None:
            return False
        self._domain_lapsed(
            domains=[i for i in self.domains if i["domain"] != domain],
            warm_domains=[i for i in self.warm_domains if i["domain"] != domain],
            detached_domain={**item, "status": "available", "inboxes": []},
            at=at,
        )
        return True

    def rename_inboxes(self, domain: str, inboxes: list[InboxItem], at: float) -> None:
        """New personas on one live domain's inboxes (`POST /swaps/user_names`)."""
        if self.status != COMPLETED:
            raise DomainError(
                "order_state_conflict",
                f"Only a completed order's inboxes can be renamed (this one is {self.status}).",
                details={"status": self.status},
            )
        old = self.held_item(domain)

        def renamed(items: list[DomainItem]) -> list[DomainItem]:
            return [{**item, "inboxes": inboxes} if item is old else item for item in items]

        self._inboxes_renamed(
            domain=domain,
            domains=renamed(self.domains),
            at=at,
            warm_domains=renamed(self.warm_domains),
        )

    def set_domain_forwarding(self, domain_ids: list[str], url: str, at: float) -> None:
        """A forwarding job applied `url` to these of the order's domains (`dom_` ids)."""
        ids = set(domain_ids)
        held = {item["id"] for item in self.held_items}
        if not ids & held:
            return

        def forwarded(items: list[DomainItem]) -> list[DomainItem]:
            return [
                {**i, "forwarding_url": url, "forwarding_own": False} if i["id"] in ids else i
                for i in items
            ]

        self._domain_forwarding_set(
            domain_ids=sorted(ids & held),
            forwarding_url=url,
            domains=forwarded(self.domains),
            warm_domains=forwarded(self.warm_domains),
            at=at,
        )

    @property
    def held_items(self) -> list[DomainItem]:
        """The order's domains and the old domains premium swaps keep warm for it."""
        return [*self.domains, *self.warm_domains]

    def held_item(self, domain: str) -> DomainItem:
        """One of `held_items`."""
        for item in self.held_items:
            if item["domain"] == domain:
                return item
        raise DomainError("conflict", f"{domain} is not on this order.")

    def domain_item(self, domain: str) -> DomainItem:
        for item in self.domains:
            if item["domain"] == domain:
                return item
        raise DomainError("conflict", f"{domain} is not on this order.")

    @property
    def refundable_cents(self) -> int:
        """Money back on failure before completion: all of it (a completed order was
        delivered, so its charge stands)."""
        if self.completed_at is not None:
            return 0
        return self.charged_cents - self.refunded_cents

    @property
    def cancel_refund_cents(self) -> int:
        """Money back on a cancellation before completion: all but the registration of every
        domain the order already registered, which the organization keeps (free for a new
        order, spec 3)."""
        kept = sum(
            int(item.get("price_cents") or 0)
            for item in self.domains
            if item.get("source") in BOUGHT_SOURCES and item.get("registered")
        )
        return max(0, self.refundable_cents - kept)

    # Recorded mutators: assignment only, they re-run on every replay.

    @event("StepCompleted")
    def _step_completed(self, *, step: str, domains: list[DomainItem], at: float) -> None:
        self.steps_done = [*self.steps_done, step]
        self.domains = domains
        self.failed_step = None
        self.step_failure = None
        self.updated_at = at

    @event("StepFailed")
    def _step_failed(self, *, step: str, reason: str, at: float) -> None:
        self.failed_step = step
        self.step_failure = reason
        self.updated_at = at

    @event("StepRetried")
    def _step_retried(self, *, step: str, at: float) -> None:
        self.failed_step = None
        self.step_failure = None
        self.updated_at = at

    @event("Completed")
    def _completed(self, *, domains: list[DomainItem], at: float) -> None:
        self.domains = domains
        self.status = COMPLETED
        self.completed_at = at
        self.updated_at = at

    @event("Failed")
    def _failed(
        self,
        *,
        reason: str,
        refund_cents: int,
        at: float,
        domains: list[DomainItem] | None = None,  # None: stored before it, all failed
    ) -> None:
        self.status = FAILED
        self.reason = reason
        self.refunded_cents += refund_cents
        if domains is None:
            domains = [{**d, "status": FAILED} for d in self.domains]
        self.domains = domains
        self.updated_at = at

    @event("ActionRequired")
    def _action_required(self, *, action_id: str, reason: str, at: float) -> None:
        self.status = ACTION_REQUIRED
        self.pending_action_id = action_id
        self.reason = reason
        self.failed_step = None  # the step now waits for the partner, not for a retry
        self.step_failure = None
        self.updated_at = at

    @event("Resumed")
    def _resumed(self, *, profile_picture_url: str | None, at: float) -> None:
        self.status = IN_PROGRESS
        self.profile_picture_url = profile_picture_url
        self.pending_action_id = None
        self.reason = None
        self.updated_at = at

    @event("DomainSwapped")
    def _domain_swapped(
        self,
        *,
        domains: list[DomainItem],
        warm_domains: list[DomainItem],
        detached_domain: DomainItem | None,
        swap_id: str,
        at: float,
    ) -> None:
        self.domains = domains
        self.warm_domains = warm_domains
        self.updated_at = at

    @event("DomainSwapClaimed")
    def _domain_swap_claimed(
        self, *, domain: str, swap_id: str, claims: dict[str, str], at: float
    ) -> None:
        # Not the order's `updated_at`: nothing a partner sees changed yet.
        self.swap_claims = claims

    @event("WarmDomainDetached")
    def _warm_domain_detached(
        self, *, warm_domains: list[DomainItem], detached_domain: DomainItem, at: float
    ) -> None:
        self.warm_domains = warm_domains
        self.updated_at = at

    @event("DomainLapsed")
    def _domain_lapsed(
        self,
        *,
        domains: list[DomainItem],
        warm_domains: list[DomainItem],
        detached_domain: DomainItem,
        at: float,
    ) -> None:
        self.domains = domains
        self.warm_domains = warm_domains
        self.updated_at = at

    @event("InboxesRenamed")
    def _inboxes_renamed(
        self,
        *,
        domain: str,
        domains: list[DomainItem],
        at: float,
        warm_domains: list[DomainItem] | None = None,  # absent from events stored before it
    ) -> None:
        self.domains = domains
        if warm_domains is not None:
            self.warm_domains = warm_domains
        self.updated_at = at

    @event("DomainForwardingSet")
    def _domain_forwarding_set(
        self,
        *,
        domain_ids: list[str],
        forwarding_url: str,
        domains: list[DomainItem],
        warm_domains: list[DomainItem],
        at: float,
    ) -> None:
        self.domains = domains
        self.warm_domains = warm_domains
        self.updated_at = at

    @event("CancelScheduled")
    def _cancel_scheduled(self, *, cancel_after: float, at: float) -> None:
        self.cancelled_from = self.status
        self.status = CANCEL_SCHEDULED
        self.cancel_after = cancel_after
        self.updated_at = at

    @event("Cancelled")
    def _cancelled(self, *, domains: list[DomainItem], refund_cents: int, at: float) -> None:
        self.status = CANCELLED
        self.domains = domains
        self.refunded_cents += refund_cents
        self.cancelled_at = at
        self.updated_at = at
