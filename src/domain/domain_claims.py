"""The placement lock of one domain name in one tenant: which order holds it now.

Placement checks the read models first (clear errors, no event-store scan), but two requests
racing for the same name both pass that check. So the order is saved together with the claim
of each domain it takes, in one atomic save: the claim's id is derived from tenant and name,
and every take records a new version, so of two concurrent takes only one is stored and the
other is a version conflict. The loser re-reads the claim, finds it held by an order that is
still being set up or torn down, and is refused (`domain_already_in_active_order`).

A swap that brings a new domain onto an order takes its claim the same way, until the swap
ends: the holder (`order_id`, as the event has always named it) is then a `swp_` id.

A claim is never released by an event of its own: whether the holder still holds it is read
from the holder's status when someone else wants the name (see `services.domains.claims`).

| move (event)        | from          | to                          |
| ------------------- | ------------- | --------------------------- |
| `__init__` (Opened) | (new)         | held by nobody              |
| `take` (Taken)      | any           | held by an order or a swap  |
"""

from __future__ import annotations

import uuid
from typing import Any, ClassVar

from eventsourcing.domain import Aggregate, event

_CLAIM_NAMESPACE = uuid.UUID("5b0e2f7c-1d8a-4c3e-9f6a-7e2b4d1c8a93")


def claim_id(org_id: str, environment: str, name: str) -> uuid.UUID:
    """One claim per tenant and name, found without a lookup table."""
    return uuid.uuid5(_CLAIM_NAMESPACE, f"{org_id}:{environment}:{name}")


class DomainClaim(Aggregate):
    # Its events, made by `@event` below: named here so that code using them is checked.
    Opened: ClassVar[type[Aggregate.Event]]
    Taken: ClassVar[type[Aggregate.Event]]

    @staticmethod
    def create_id(*_: Any, org_id: str, environment: str, name: str, **__: Any) -> uuid.UUID:
        return claim_id(org_id, environment, name)

    @event("Opened")
    def __init__(self, *, org_id: str, environment: str, name: str, at: float) -> None:
        self.org_id = org_id
        self.environment = environment
        self.name = name
        self.order_id: str | None = None
        self.updated_at = at

    def take(self, order_id: str, at: float) -> None:
        self._taken(order_id=order_id, at=at)

    @event("Taken")
    def _taken(self, *, order_id: str, at: float) -> None:
        self.order_id = order_id
        self.updated_at = at
