"""AuditService: the stored history as it was recorded, and checks of what was built on it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING
from uuid import UUID

from eventsourcing.domain import DomainEventProtocol
from grpc.aio import ServicerContext

from audit.chain import verify_and_seal
from audit.records import EventRecord, Owners, describe, history, parse_aggregate_id
from audit.replay import replay
from domain.errors import NotFound, invalid
from infra.blocking import run_blocking
from infra.ids import parse_id
from partnerapi.v2 import audit_pb2, audit_pb2_grpc
from partnerapi.v2.audit_pb2 import (
    GetHistoryRequest,
    GetHistoryResponse,
    StreamEventsRequest,
    StreamEventsResponse,
    VerifyChainRequest,
    VerifyChainResponse,
    VerifyProjectionsRequest,
    VerifyProjectionsResponse,
)

if TYPE_CHECKING:
    from runtime.container import Container

BATCH = 500


def stored_event(record: EventRecord) -> audit_pb2.StoredEvent:
    return audit_pb2.StoredEvent(
        position=record.position,
        aggregate_id=record.aggregate_id,
        aggregate_type=record.aggregate_type,
        version=record.version,
        type=record.type,
        topic=record.topic,
        timestamp=record.timestamp,
        org_id=record.org_id,
        environment=record.environment,
        data_json=json.dumps(record.data, separators=(",", ":")),
    )


class EventFilter:
    def __init__(self, request: StreamEventsRequest) -> None:
        self.aggregate = None
        if request.aggregate_id:
            self.aggregate = parse_aggregate_id(request.aggregate_id)
            if self.aggregate is None:
                raise invalid("aggregate_id must be a public id or a UUID.", "aggregate_id")
        if request.org_id and parse_id("org", request.org_id) is None:
            raise invalid("org_id must be an org_ id.", "org_id")
        self.org_id = request.org_id
        self.types = frozenset(request.types)

    def admits(self, event: DomainEventProtocol[UUID], owners: Owners) -> bool:
        if self.aggregate is not None and event.originator_id != self.aggregate:
            return False
        if self.types and type(event).__qualname__ not in self.types:
            return False
        return not self.org_id or owners.of(event)[0] == self.org_id


class AuditServicer(audit_pb2_grpc.AuditServiceServicer):
    def __init__(self, container: Container) -> None:
        self.c = container

    def _batch(
        self, after: int, admits: EventFilter, owners: Owners
    ) -> tuple[list[audit_pb2.StoredEvent], int]:
        store = self.c.store
        notifications = store.recorder.select_notifications(start=after + 1, limit=BATCH)
        matched: list[audit_pb2.StoredEvent] = []
        for notification in notifications:
            event = store.mapper.to_domain_event(notification)
            if admits.admits(event, owners):
                record = describe(notification.id, notification.topic, event, owners)
                matched.append(stored_event(record))
        return matched, notifications[-1].id if notifications else after

    async def StreamEvents(
        self,
        request: StreamEventsRequest,
        context: ServicerContext[StreamEventsRequest, StreamEventsResponse],
    ) -> AsyncIterator[StreamEventsResponse]:
        admits = EventFilter(request)
        owners = Owners(self.c.store)
        position = max(0, int(request.after_position))
        while True:
            matched, reached = await run_blocking(self._batch, position, admits, owners)
            for event in matched:
                yield StreamEventsResponse(event=event)
            if reached == position:
                if not request.follow:
                    return
                await asyncio.sleep(self.c.settings.poll_interval_seconds)
            position = reached

    async def GetHistory(
        self, request: GetHistoryRequest, context: ServicerContext[GetHistoryRequest, GetHistoryResponse]
    ) -> GetHistoryResponse:
        aggregate = parse_aggregate_id(request.aggregate_id)
        if aggregate is None:
            raise invalid("aggregate_id must be a public id or a UUID.", "aggregate_id")
        records = await run_blocking(history, self.c.store, aggregate)
        if not records:
            raise NotFound("aggregate", field="aggregate_id")
        return GetHistoryResponse(events=[stored_event(r) for r in records])

    async def VerifyProjections(
        self, request: VerifyProjectionsRequest, context: ServicerContext[VerifyProjectionsRequest, VerifyProjectionsResponse]
    ) -> VerifyProjectionsResponse:
        c = self.c
        report = await run_blocking(replay, c.settings, c.store, c.read_models)
        return VerifyProjectionsResponse(
            identical=report.identical,
            position=report.position,
            events=report.events,
            tables=[
                audit_pb2.TableComparison(
                    table=t.table,
                    live_rows=t.live_rows,
                    replayed_rows=t.replayed_rows,
                    identical=t.identical,
                    only_live=t.only_live,
                    only_replayed=t.only_replayed,
                )
                for t in report.tables
            ],
        )

    async def VerifyChain(
        self, request: VerifyChainRequest, context: ServicerContext[VerifyChainRequest, VerifyChainResponse]
    ) -> VerifyChainResponse:
        report = await run_blocking(verify_and_seal, self.c.store, self.c.ops_db)
        return VerifyChainResponse(
            intact=report.intact,
            checked=report.checked,
            sealed_through=report.sealed_through,
            problem=report.problem,
            first_bad_position=report.first_bad_position,
        )
