"""One organization's history as JSON lines, oldest first, for an auditor to keep."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TextIO

from audit.records import EventRecord, Owners, describe, read_notifications
from domain.errors import NotFound
from domain.organizations import Organization
from infra.ids import parse_id
from infra.store import EventStore


def organization_events(store: EventStore, org_id: str, after: int = 0) -> Iterator[EventRecord]:
    if store.find(parse_id("org", org_id), Organization) is None:
        raise NotFound("organization", field="org")
    owners = Owners(store)
    mapper = store.mapper
    for notifications in read_notifications(store, after):
        for notification in notifications:
            event = mapper.to_domain_event(notification)
            if owners.of(event)[0] == org_id:
                yield describe(notification.id, notification.topic, event, owners)


def export_organization(store: EventStore, org_id: str, out: TextIO) -> int:
    count = 0
    for record in organization_events(store, org_id):
        out.write(json.dumps(record.as_json(), separators=(",", ":")) + "\n")
        count += 1
    return count
