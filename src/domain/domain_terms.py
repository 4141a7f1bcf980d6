"""The registration term of a domain bought through the service (decisions.md 6): it renews
on each anniversary of its registration from the wallet, or lapses at the end of its year
when `auto_renew` is off. Imported domains renew with the customer's registrar: no term.

| move (event)                              | then                                           |
| ----------------------------------------- | ---------------------------------------------- |
| `__init__` (Started)                      | first year from `registered_at`                |
| `set_auto_renew` (AutoRenewSet)           | renews, or lapses, at `expires_at`             |
| `renew` (Renewed)                         | one more year; a failed payment is over        |
| `payment_failed` (RenewalPaymentFailed)   | `action_required`, tried again at `retry_at`   |
| `lapse` (Lapsed)                          | gone: out of inventory and off its orders      |

One aggregate per `dom_` id, found without a lookup table; started on first need (a PATCH,
or the first anniversary) from the domain's row.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any, ClassVar

from eventsourcing.domain import Aggregate, event

_TERM_NAMESPACE = uuid.UUID("0c7e55d2-3b8f-4f6a-a1d9-64e2b7c51f08")
DAY = 86_400.0
# A live renewal the wallet cannot cover is tried again daily for this long, then lapses.
PAYMENT_GRACE_DAYS = 30
ACTIVE, PAYMENT_FAILED, LAPSED = "active", "renewal_payment_failed", "lapsed"


def term_id(dom_id: str) -> uuid.UUID:
    return uuid.uuid5(_TERM_NAMESPACE, dom_id)


def anniversary(registered_at: float, years: int) -> float:
    """The same calendar day and time `years` later (29 February: the 28th)."""
    start = datetime.fromtimestamp(registered_at, tz=UTC)
    try:
        moved = start.replace(year=start.year + years)
    except ValueError:
        moved = start.replace(year=start.year + years, day=28)
    return moved.timestamp()


class DomainTerm(Aggregate):
    # Its events, made by `@event` below: named here so that code using them is checked.
    Started: ClassVar[type[Aggregate.Event]]
    AutoRenewSet: ClassVar[type[Aggregate.Event]]
    Renewed: ClassVar[type[Aggregate.Event]]
    RenewalPaymentFailed: ClassVar[type[Aggregate.Event]]
    Lapsed: ClassVar[type[Aggregate.Event]]

    @staticmethod
    def create_id(*_: Any, dom_id: str, **__: Any) -> uuid.UUID:
        return term_id(dom_id)

    @event("Started")
    def __init__(
        self,
        *,
        dom_id: str,
        org_id: str,
        environment: str,
        name: str,
        registered_at: float,
        auto_renew: bool,
    ) -> None:
        self.dom_id = dom_id
        self.org_id = org_id
        self.environment = environment
        self.name = name
        self.registered_at = registered_at
        self.auto_renew = auto_renew
        self.years = 1
        self.expires_at = anniversary(registered_at, 1)
        self.status = ACTIVE
        self.failed_since: float | None = None
        self.retry_at: float | None = None

    @property
    def tenant(self) -> str:
        return f"{self.org_id}:{self.environment}"

    @property
    def due_at(self) -> float | None:
        """When this term next needs a move: its end, or the next try of a failed payment."""
        if self.status == LAPSED:
            return None
        return self.retry_at if self.retry_at is not None else self.expires_at

    @property
    def grace_over(self) -> bool:
        return (
            self.failed_since is not None
            and self.due_at is not None
            and self.due_at >= self.failed_since + PAYMENT_GRACE_DAYS * DAY
        )

    @event("AutoRenewSet")
    def set_auto_renew(self, auto_renew: bool, at: float) -> None:
        self.auto_renew = auto_renew

    @event("Renewed")
    def renew(self, charged_cents: int, at: float) -> None:
        self.years += 1
        self.expires_at = anniversary(self.registered_at, self.years)
        self.status = ACTIVE
        self.failed_since = None
        self.retry_at = None

    @event("RenewalPaymentFailed")
    def payment_failed(self, required_cents: int, at: float) -> None:
        self.status = PAYMENT_FAILED
        if self.failed_since is None:
            self.failed_since = at
        self.retry_at = at + DAY

    @event("Lapsed")
    def lapse(self, at: float) -> None:
        self.status = LAPSED
        self.retry_at = None
