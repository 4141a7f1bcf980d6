"""A domain the organization owns (`dom_`): one id for its whole life, on an order or not.

| move (event)                         | from                          | to                |
| ------------------------------------ | ----------------------------- | ----------------- |
| `__init__` (Registered)              | (new)                         | `available`       |
| `attach` (Attached)                  | `available`                   | `in_progress`     |
| `mark_connected` (Connected)         | `in_progress`, `action_required` | `active`       |
| `require_action` (ActionRequired)    | any but `failed`              | `action_required` |
| `nameservers_pointed` (NameserversPointed) | `action_required`, not on an order | `available` |
| `mark_failed` (Failed)               | any                           | `failed`          |
| `release` (Released)                 | any                           | `available`       |
| `set_forwarding` (ForwardingUpdated) | any                           | (unchanged)       |

Category: `connected` while on an order (`order_id` set), else `inventory`.

One writer at a time: orders keep the domains they use as items of the Order aggregate (with
the same `dom_` id). When an order names an imported Domain, the order's item is the domain's
state while the order holds it (the inventory row follows the order's events, and
`domain.connected` comes once, from `Order.Completed`); this aggregate then only contributes its
forwarding URL (`projections.domains`). Orders therefore never call `attach`,
`mark_connected` or `release`; those moves are for holders that are not orders.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, ClassVar

from eventsourcing.domain import Aggregate, event

from domain.errors import DomainError
from domain.orders import DomainItem

SOURCES = ("purchased", "imported", "ordered", "generated")
AVAILABLE = "available"
IN_PROGRESS = "in_progress"
ACTIVE = "active"
FAILED = "failed"
ACTION_REQUIRED = "action_required"
STATUSES = (AVAILABLE, IN_PROGRESS, ACTIVE, FAILED, ACTION_REQUIRED)
# The reason of an imported domain waiting for the customer to set our nameservers.
NAMESERVERS_NOT_POINTED = "nameservers_not_pointed"
SUITES = ("suite_a", "suite_b")


def listed_source(item: DomainItem) -> str:
    """Where an order's domain came from, in the `source` words of `GET /domains`: the item's
    own `source` says how the order came by it (`named`, `inventory`, `generated`, `purchase`),
    `origin` (recorded at placement for a domain already owned) how the account did."""
    origin = item.get("origin")
    if origin in SOURCES:
        return str(origin)
    return {"generated": "generated", "purchase": "purchased"}.get(item.get("source", ""), "ordered")


def usable_for(users: Collection[str]) -> list[str]:
    """Spec 2.5: the suites a domain can still serve, given the suites that send from it."""
    return ["suite_a"] if "suite_b" in users else list(SUITES)


class Domain(Aggregate):
    # Its events, made by `@event` below: named here so that code using them is checked.
    Registered: ClassVar[type[Aggregate.Event]]
    Attached: ClassVar[type[Aggregate.Event]]
    Connected: ClassVar[type[Aggregate.Event]]
    ActionRequired: ClassVar[type[Aggregate.Event]]
    NameserversPointed: ClassVar[type[Aggregate.Event]]
    Failed: ClassVar[type[Aggregate.Event]]
    Released: ClassVar[type[Aggregate.Event]]
    ForwardingUpdated: ClassVar[type[Aggregate.Event]]

    @event("Registered")
    def __init__(
        self,
        *,
        org_id: str,
        environment: str,
        name: str,
        source: str,
        auto_renew: bool,
        price_cents: int,
        renewal_price_cents: int,
        dns_records: list[dict[str, Any]],
        created_at: float,
    ) -> None:
        self.org_id = org_id
        self.environment = environment
        self.name = name
        self.source = source
        self.auto_renew = auto_renew
        self.price_cents = price_cents
        self.renewal_price_cents = renewal_price_cents
        self.dns_records = dns_records
        self.status = AVAILABLE
        self.reason: str | None = None
        self.order_id: str | None = None
        self.suite: str | None = None
        self.provider: str | None = None
        self.workspace_id: str | None = None
        self.customer_id: str | None = None
        self.forwarding_url: str | None = None
        self.created_at = created_at
        self.updated_at = created_at

    @property
    def tenant(self) -> str:
        return f"{self.org_id}:{self.environment}"

    @property
    def category(self) -> str:
        return "connected" if self.order_id is not None else "inventory"

    def _refuse(self, move: str) -> DomainError:
        return DomainError(
            "conflict",
            f"A domain in status '{self.status}' cannot {move}.",
            details={"status": self.status},
        )

    # Public commands: check, then record plain values.

    def attach(
        self,
        order_id: str,
        suite: str | None,
        provider: str | None,
        workspace_id: str | None,
        customer_id: str | None,
        forwarding_url: str | None,
        at: float,
    ) -> None:
        if self.status != AVAILABLE or self.order_id is not None:
            raise self._refuse("join an order")
        self._attached(
            order_id=order_id,
            suite=suite,
            provider=provider,
            workspace_id=workspace_id,
            customer_id=customer_id,
            forwarding_url=forwarding_url,
            at=at,
        )

    def mark_connected(self, at: float) -> None:
        if self.status not in (IN_PROGRESS, ACTION_REQUIRED):
            raise self._refuse("connect")
        self._connected(at=at)

    def require_action(self, reason: str, at: float) -> None:
        if self.status == FAILED:
            raise self._refuse("wait for partner input")
        self._action_required(reason=reason, at=at)

    def nameservers_pointed(self, at: float) -> None:
        if self.status != ACTION_REQUIRED or self.order_id is not None:
            raise self._refuse("become available")
        self._nameservers_pointed(at=at)

    def mark_failed(self, reason: str, at: float) -> None:
        self._failed(reason=reason, at=at)

    def release(self, at: float) -> None:
        self._released(at=at)

    def set_forwarding(self, url: str | None, at: float) -> None:
        self._forwarding_updated(url=url, at=at)

    # Recorded mutators: assignment only.

    @event("Attached")
    def _attached(
        self,
        *,
        order_id: str,
        suite: str | None,
        provider: str | None,
        workspace_id: str | None,
        customer_id: str | None,
        forwarding_url: str | None,
        at: float,
    ) -> None:
        self.order_id = order_id
        self.suite = suite
        self.provider = provider
        self.workspace_id = workspace_id
        self.customer_id = customer_id
        self.forwarding_url = forwarding_url
        self.status = IN_PROGRESS
        self.reason = None
        self.updated_at = at

    @event("Connected")
    def _connected(self, *, at: float) -> None:
        self.status = ACTIVE
        self.reason = None
        self.updated_at = at

    @event("ActionRequired")
    def _action_required(self, *, reason: str, at: float) -> None:
        self.status = ACTION_REQUIRED
        self.reason = reason
        self.updated_at = at

    @event("NameserversPointed")
    def _nameservers_pointed(self, *, at: float) -> None:
        self.status = AVAILABLE
        self.reason = None
        self.updated_at = at

    @event("Failed")
    def _failed(self, *, reason: str, at: float) -> None:
        self.status = FAILED
        self.reason = reason
        self.updated_at = at

    @event("Released")
    def _released(self, *, at: float) -> None:
        self.status = AVAILABLE
        self.reason = None
        self.order_id = None
        self.suite = None
        self.provider = None
        self.updated_at = at

    @event("ForwardingUpdated")
    def _forwarding_updated(self, *, url: str | None, at: float) -> None:
        self.forwarding_url = url
        self.updated_at = at
