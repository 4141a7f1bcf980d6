"""Which stored domain events become which public webhook events (spec 6).

Each capability registers mappers here, keyed by the qualified name of a domain event class
(`Order.Completed`). The outbox publisher calls `public_events_for` on every notification.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from eventsourcing.domain import DomainEvent

from domain.events import event_names
from infra.store import EventStore

_EVENT_ID_NAMESPACE = uuid.UUID("0c8a2b8e-54a9-4d3e-9b61-3f7f0e6d2a11")
_NAMESPACE_SHA1 = hashlib.sha1(_EVENT_ID_NAMESPACE.bytes)  # copied, never updated: thread-safe


@dataclass(frozen=True)
class PublicEvent:
    type: str  # one of the 18 spec types or the pool.* family, e.g. "order.completed"
    org_id: str  # org_...
    environment: str  # "test" or "live"
    resource_id: str  # public id of the resource the event is about, e.g. ord_...
    data: dict[str, Any]
    created_at: float  # unix seconds, from the domain event
    id: str = ""  # evt_...; assigned by public_events_for
    change: str = ""  # the stored event it came from: the events of one change share it

    @property
    def tenant(self) -> str:
        return f"{self.org_id}:{self.environment}"


def event_about(
    owner: Any, type_: str, resource_id: str, data: dict[str, Any], at: float
) -> PublicEvent:
    """A public event of `owner`'s organization and environment (an aggregate's)."""
    return PublicEvent(
        type=type_,
        org_id=owner.org_id,
        environment=owner.environment,
        resource_id=resource_id,
        data=data,
        created_at=at,
    )


Mapper = Callable[[Any, EventStore], list[PublicEvent]]
MAPPERS: dict[str, Mapper] = {}


def maps(*events: type[DomainEvent]) -> Callable[[Mapper], Mapper]:
    """Register a mapper for these domain event classes, keyed by their qualified names.
    Anything but an event class is a TypeError."""
    names = event_names(*events)

    def register(func: Mapper) -> Mapper:
        for name in names:
            MAPPERS[name] = func
        return func

    return register


def stable_event_id(originator_id: uuid.UUID, originator_version: int, index: int) -> str:
    """One logical event, one id: derived from the stored event, so republishing and
    redelivery always carry the same evt_ id."""
    name = f"{originator_id.hex}:{originator_version}:{index}"
    # uuid.uuid5 by hand, the same hex without building UUID objects (a replay derives one id
    # per public event): SHA-1 of namespace + name, first 16 bytes, version 5, RFC 4122 variant.
    digest = _NAMESPACE_SHA1.copy()
    digest.update(name.encode())
    raw = bytearray(digest.digest()[:16])
    raw[6] = raw[6] & 0x0F | 0x50
    raw[8] = raw[8] & 0x3F | 0x80
    return "evt_" + raw.hex()


def _envelope_time(event: PublicEvent, domain_event: Any) -> float:
    """A sandbox event's envelope keeps real time (decisions.md 6: its organization's clock
    may be ahead): the time the event was stored, which a replay reads back unchanged."""
    stored = getattr(domain_event, "timestamp", None)
    if event.environment != "test" or stored is None:
        return event.created_at
    return float(stored.timestamp())


# Each says "all of it is done": it goes out after the `domain.connected` (and other) events the
# same change made, so a receiver that acts on it has already seen its parts.
PUBLISHED_LAST = frozenset({"order.completed", "swap.completed"})


def public_events_for(domain_event: Any, store: EventStore) -> list[PublicEvent]:
    mapper = MAPPERS.get(type(domain_event).__qualname__)
    if mapper is None:
        return []
    events = mapper(domain_event, store)
    stamped = [
        PublicEvent(
            type=e.type,
            org_id=e.org_id,
            environment=e.environment,
            resource_id=e.resource_id,
            data=e.data,
            created_at=_envelope_time(e, domain_event),
            id=stable_event_id(domain_event.originator_id, domain_event.originator_version, i),
            change=f"{domain_event.originator_id.hex}:{domain_event.originator_version}",
        )
        for i, e in enumerate(events)
    ]
    # Ids follow the mapper's order (so they never change); the log's positions, the outbox and
    # every listing follow the lifecycle: a completion after the events of its parts.
    return sorted(stamped, key=lambda event: event.type in PUBLISHED_LAST)
