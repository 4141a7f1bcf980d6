"""A domain in the pre-warmed pool (spec 3, Pool domains): one aggregate per tenant and name.

The id is derived from (organization, environment, name), so two requests that pool the same
name at once collide on the store's version check instead of creating two records.

| move (event)                    | from                                   | to                 |
| ------------------------------- | -------------------------------------- | ------------------ |
| `__init__` (Tracked)            | (new)                                  | `not_pooled`       |
| `add` (Added)                   | `not_pooled`, `removed` (not burned)   | `warming`          |
| `remove` (Removed)              | `available`, `warming`, `idle_quarantined` | `removed`      |
| `reserve` (Reserved)            | `available`                            | `reserved`         |
| `assign` (Assigned)             | `reserved` (same reservation)          | `assigned`         |
| `unreserve` (Unreserved)        | `reserved` (same reservation)          | `available` (burned: `removed`) |
| `start_release` (ReleaseStarted)| `assigned`                             | `releasing`        |
| `finish_release` (Released)     | `releasing` (same release)             | `idle_quarantined` (burned: `removed`) |
| `mark_burned` (Burned)          | any                                    | unlinked: `removed`; linked: unchanged |
| `retire` (Retired)              | `assigned`                             | `removed`          |
| `lapse` (Lapsed)                | any pooled                             | `removed`          |

A lapsed domain (its year ended with `auto_renew` off) is no longer the organization's: it leaves
the pool whatever its condition, unlinked from its workspace; an attach or release under way
then finishes without it (`attach`'s all-or-nothing fails it).

`warming` and `idle_quarantined` carry `available_at`: from that instant on (on the injected
clock) the domain counts as `available` without another event (`condition_at`).
"""

from __future__ import annotations

import uuid
from typing import Any, ClassVar

from eventsourcing.domain import Aggregate, event

from domain.errors import DomainError

NOT_POOLED = "not_pooled"
WARMING = "warming"
AVAILABLE = "available"
IDLE_QUARANTINED = "idle_quarantined"
RESERVED = "reserved"
ASSIGNED = "assigned"
RELEASING = "releasing"
REMOVED = "removed"
# The six conditions a partner sees on GET /pool/domains.
CONDITIONS = (AVAILABLE, WARMING, IDLE_QUARANTINED, ASSIGNED, RESERVED, RELEASING)
REMOVABLE = (AVAILABLE, WARMING, IDLE_QUARANTINED)
LINKED = (ASSIGNED, RESERVED, RELEASING)
_NAMESPACE = uuid.UUID("5e0f3c1a-2b7d-4a8e-9c61-7d2f0a4b9e13")


def pool_domain_id(org_id: str, environment: str, name: str) -> uuid.UUID:
    return uuid.uuid5(_NAMESPACE, f"{org_id}:{environment}:{name}")


class PoolDomain(Aggregate):
    # Its events, made by `@event` below: named here so that code using them is checked.
    Tracked: ClassVar[type[Aggregate.Event]]
    Added: ClassVar[type[Aggregate.Event]]
    Removed: ClassVar[type[Aggregate.Event]]
    Reserved: ClassVar[type[Aggregate.Event]]
    Assigned: ClassVar[type[Aggregate.Event]]
    Unreserved: ClassVar[type[Aggregate.Event]]
    ReleaseStarted: ClassVar[type[Aggregate.Event]]
    Released: ClassVar[type[Aggregate.Event]]
    Burned: ClassVar[type[Aggregate.Event]]
    Retired: ClassVar[type[Aggregate.Event]]
    Lapsed: ClassVar[type[Aggregate.Event]]

    # Whether the release now under way gives back a burned domain whose replacement failed:
    # its row needed the partner (`replacement_needed`) and no longer does once it is out.
    released_awaiting_replacement = False

    @staticmethod
    def create_id(*_: Any, org_id: str, environment: str, name: str, **__: Any) -> uuid.UUID:
        return pool_domain_id(org_id, environment, name)

    @event("Tracked")
    def __init__(self, *, org_id: str, environment: str, name: str, at: float) -> None:
        self.org_id = org_id
        self.environment = environment
        self.name = name
        self.condition = NOT_POOLED
        self.dom_id: str | None = None
        self.order_id: str | None = None
        self.inbox_count = 0
        self.available_at: float | None = None
        self.reservation_id: str | None = None
        self.release_id: str | None = None
        self.workspace_id: str | None = None
        self.client_id: int | None = None
        self.burned = False
        self.burned_reason: str | None = None
        self.added_at: float | None = None
        self.created_at = at
        self.updated_at = at

    @property
    def tenant(self) -> str:
        return f"{self.org_id}:{self.environment}"

    @property
    def pooled(self) -> bool:
        return self.condition not in (NOT_POOLED, REMOVED)

    def condition_at(self, now: float) -> str:
        """The condition a partner sees: warm-up and quarantine end on the clock."""
        if self.condition in (WARMING, IDLE_QUARANTINED) and (self.available_at or 0) <= now:
            return AVAILABLE
        return self.condition

    def _refuse(self, move: str, now: float) -> DomainError:
        condition = self.condition_at(now)
        return DomainError(
            "pool_state_conflict",
            f"Pool domain {self.name} is {condition} and cannot {move}.",
            details={"domain": self.name, "condition": condition},
        )

    # Public commands: check, then record plain values.

    def add(
        self, *, dom_id: str, order_id: str, inbox_count: int, available_at: float, at: float
    ) -> None:
        if self.pooled or self.burned:
            raise self._refuse("be added", at)
        self._added(
            dom_id=dom_id,
            order_id=order_id,
            inbox_count=inbox_count,
            available_at=available_at,
            at=at,
        )

    def remove(self, at: float) -> None:
        if self.condition_at(at) not in REMOVABLE:
            raise self._refuse("be removed", at)
        self._removed(at=at)

    def reserve(
        self, *, reservation_id: str, workspace_id: str, client_id: int | None, at: float
    ) -> None:
        if self.condition_at(at) != AVAILABLE or self.burned:
            raise self._refuse("be reserved", at)
        self._reserved(
            reservation_id=reservation_id, workspace_id=workspace_id, client_id=client_id, at=at
        )

    def assign(self, reservation_id: str, at: float) -> None:
        if self.condition != RESERVED or self.reservation_id != reservation_id:
            raise self._refuse("be assigned", at)
        self._assigned(at=at)

    def unreserve(self, reservation_id: str, at: float) -> None:
        if self.condition != RESERVED or self.reservation_id != reservation_id:
            raise self._refuse("be unreserved", at)
        self._unreserved(at=at)

    def start_release(self, release_id: str, at: float) -> None:
        if self.condition != ASSIGNED:
            raise self._refuse("be released", at)
        # Recorded as a fact: a release stored before it replays as one that ended no wait.
        self._release_started(release_id=release_id, at=at, awaiting_replacement=self.burned)

    def finish_release(self, release_id: str, available_at: float, at: float) -> None:
        if self.condition != RELEASING or self.release_id != release_id:
            raise self._refuse("finish its release", at)
        self._released(available_at=available_at, at=at)

    def mark_burned(
        self, job_id: str, reason: str, at: float, dom_id: str, order_id: str | None
    ) -> None:
        """A burned provider result; a domain never pooled learns which `dom_` (and order) it
        is, so its `pool.domain_burned` names them."""
        known = self.dom_id is not None
        self._burned(
            job_id=job_id,
            reason=reason,
            unlink=self.condition_at(at) in REMOVABLE,
            at=at,
            dom_id=None if known else dom_id,
            order_id=None if known else order_id,
        )

    def retire(self, replacement_id: str, at: float) -> None:
        if self.condition != ASSIGNED:
            raise self._refuse("be retired", at)
        self._retired(replacement_id=replacement_id, at=at)

    def lapse(self, at: float) -> None:
        if not self.pooled:
            raise self._refuse("lapse out of the pool", at)
        self._lapsed(at=at)

    # Recorded mutators: assignment only.

    @event("Added")
    def _added(
        self, *, dom_id: str, order_id: str, inbox_count: int, available_at: float, at: float
    ) -> None:
        self.condition = WARMING
        self.dom_id = dom_id
        self.order_id = order_id
        self.inbox_count = inbox_count
        self.available_at = available_at
        self.added_at = at
        self.updated_at = at

    @event("Removed")
    def _removed(self, *, at: float) -> None:
        self.condition = REMOVED
        self.available_at = None
        self.updated_at = at

    @event("Reserved")
    def _reserved(
        self, *, reservation_id: str, workspace_id: str, client_id: int | None, at: float
    ) -> None:
        self.condition = RESERVED
        self.reservation_id = reservation_id
        self.workspace_id = workspace_id
        self.client_id = client_id
        self.available_at = None
        self.updated_at = at

    @event("Assigned")
    def _assigned(self, *, at: float) -> None:
        self.condition = ASSIGNED
        self.updated_at = at

    @event("Unreserved")
    def _unreserved(self, *, at: float) -> None:
        self.condition = REMOVED if self.burned else AVAILABLE
        self.reservation_id = None
        self.workspace_id = None
        self.client_id = None
        self.updated_at = at

    @event("ReleaseStarted")
    def _release_started(
        self, *, release_id: str, at: float, awaiting_replacement: bool = False
    ) -> None:
        self.condition = RELEASING
        self.release_id = release_id
        self.released_awaiting_replacement = awaiting_replacement
        self.updated_at = at

    @event("Released")
    def _released(self, *, available_at: float, at: float) -> None:
        self.condition = REMOVED if self.burned else IDLE_QUARANTINED
        self.available_at = None if self.burned else available_at
        self.reservation_id = None
        self.release_id = None
        self.workspace_id = None
        self.client_id = None
        self.updated_at = at

    @event("Burned")
    def _burned(
        self,
        *,
        job_id: str,
        reason: str,
        unlink: bool,
        at: float,
        # Absent from events recorded before they were (the domain was then left unnamed).
        dom_id: str | None = None,
        order_id: str | None = None,
    ) -> None:
        if dom_id is not None:
            self.dom_id = dom_id
            self.order_id = order_id
        self.burned = True
        self.burned_reason = reason
        if unlink:
            self.condition = REMOVED
            self.available_at = None
        self.updated_at = at

    @event("Retired")
    def _retired(self, *, replacement_id: str, at: float) -> None:
        self.condition = REMOVED
        self.reservation_id = None
        self.workspace_id = None
        self.client_id = None
        self.updated_at = at

    @event("Lapsed")
    def _lapsed(self, *, at: float) -> None:
        self.condition = REMOVED
        self.available_at = None
        self.reservation_id = None
        self.release_id = None
        self.workspace_id = None
        self.client_id = None
        self.updated_at = at
