"""Stored events described for auditors: position, aggregate, version, time, owner and fields."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from eventsourcing.persistence import Notification

from infra.clock import iso
from infra.ids import PREFIXES, parse_id, public_id
from infra.store import EventStore

# Never handed to an auditor: a key's hash is as good as a lookup token for its aggregate.
REDACTED_FIELDS = frozenset({"secret_hash"})
_ENVELOPE_FIELDS = frozenset({"originator_id", "originator_version", "timestamp", "originator_topic"})
BATCH = 1000


@dataclass(frozen=True)
class EventRecord:
    position: int
    aggregate_id: str
    aggregate_type: str
    version: int
    type: str
    topic: str
    timestamp: str
    org_id: str
    environment: str
    data: dict[str, Any]

    def as_json(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "aggregate_id": self.aggregate_id,
            "aggregate_type": self.aggregate_type,
            "version": self.version,
            "type": self.type,
            "topic": self.topic,
            "timestamp": self.timestamp,
            "org_id": self.org_id,
            "environment": self.environment,
            "data": self.data,
        }


def event_data(event: Any) -> dict[str, Any]:
    data = {
        name: ("[redacted]" if name in REDACTED_FIELDS else value)
        for name, value in vars(event).items()
        if name not in _ENVELOPE_FIELDS
    }
    # Round-trip so UUIDs or datetimes a capability may have stored come out as strings.
    loaded: dict[str, Any] = json.loads(json.dumps(data, default=str))
    return loaded


def parse_aggregate_id(value: str) -> uuid.UUID | None:
    """A public id of any resource prefix (`ord_...`, `key_...`) or a plain UUID."""
    prefix, sep, _ = value.partition("_")
    if sep and prefix in PREFIXES:
        return parse_id(prefix, value)
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


class Owners:
    """Which organization and environment own an aggregate.

    Only an aggregate's first event names its owner, so later events are resolved through a
    bounded cache, falling back to reading that first event from the store.
    """

    def __init__(self, store: EventStore, capacity: int = 100_000) -> None:
        self.store = store
        self.capacity = capacity
        self._owners: dict[uuid.UUID, tuple[str, str]] = {}

    def of(self, event: Any) -> tuple[str, str]:
        originator = event.originator_id
        known = self._owners.get(originator)
        if known is not None:
            return known
        if event.originator_version == 1:
            owner = _owner_in(event)
        else:
            first = self.store.recorder.select_events(originator, limit=1)
            owner = _owner_in(self.store.mapper.to_domain_event(first[0])) if first else ("", "")
        if len(self._owners) >= self.capacity:
            self._owners.clear()  # constant memory over any history length
        self._owners[originator] = owner
        return owner


def _owner_in(event: Any) -> tuple[str, str]:
    if type(event).__qualname__.split(".")[0] == "Organization":
        return public_id("org", event.originator_id), ""
    return str(getattr(event, "org_id", "") or ""), str(getattr(event, "environment", "") or "")


def describe(notification_id: int, topic: str, event: Any, owners: Owners) -> EventRecord:
    name = type(event).__qualname__
    org_id, environment = owners.of(event)
    return EventRecord(
        position=notification_id,
        aggregate_id=str(event.originator_id),
        aggregate_type=name.split(".")[0],
        version=int(event.originator_version),
        type=name,
        topic=topic,
        timestamp=iso(event.timestamp.timestamp()),
        org_id=org_id,
        environment=environment,
        data=event_data(event),
    )


def read_notifications(
    store: EventStore, after: int, stop: int | None = None, batch: int = BATCH
) -> Iterator[Sequence[Notification]]:
    """The notification log in batches, oldest first, from after `after` up to `stop`."""
    position = after
    while True:
        notifications = store.recorder.select_notifications(
            start=position + 1, limit=batch, stop=stop
        )
        if not notifications:
            return
        yield notifications
        position = notifications[-1].id
        if stop is not None and position >= stop:
            return


def history(store: EventStore, aggregate_id: uuid.UUID) -> list[EventRecord]:
    stored = store.recorder.select_events(aggregate_id)
    owners = Owners(store)
    records = []
    for item in stored:
        # A stored event does not carry its notification id; history is ordered by version.
        records.append(describe(0, item.topic, store.mapper.to_domain_event(item), owners))
    return records
