"""AuditService over a real grpc.aio client: streaming the log with filters and following it
live, one aggregate's history, and the replay and chain checks."""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest
from audit_support import build_history, tamper_event
from conftest import PATIENCE, ServiceFactory
from grpc_support import auth, grpc_service, trailer, with_channel

from infra.ids import parse_id
from partnerapi.v1 import audit_pb2, audit_pb2_grpc


def test_stream_events_filters_and_follows(service_factory: ServiceFactory) -> None:
    service = grpc_service(service_factory)
    ids = build_history(service)
    head = service.container.store.recorder.max_notification_id()
    md = auth(service)

    async def collect(stub: audit_pb2_grpc.AuditServiceStub, **fields: object) -> list[audit_pb2.StoredEvent]:
        request = audit_pb2.StreamEventsRequest(**fields)  # type: ignore[arg-type]
        return [event async for event in stub.StreamEvents(request, metadata=md)]

    async def body(channel: grpc.aio.Channel) -> dict[str, object]:
        stub = audit_pb2_grpc.AuditServiceStub(channel)
        everything = await collect(stub)
        later = await collect(stub, after_position=head - 2)
        org = await collect(stub, org_id=ids["org_id"])
        revoked = await collect(stub, types=["ApiKey.Revoked"])
        one = await collect(stub, aggregate_id=ids["key_id"])
        follow = stub.StreamEvents(
            audit_pb2.StreamEventsRequest(after_position=head, follow=True, org_id=ids["other_org"]),
            metadata=md,
        )
        await asyncio.to_thread(service.container.accounts.set_rate_limit, ids["org_id"], 9.0, None)
        await asyncio.to_thread(service.container.accounts.set_rate_limit, ids["other_org"], 8.0, None)
        live = await asyncio.wait_for(follow.read(), timeout=PATIENCE)
        follow.cancel()
        return locals()

    got = with_channel(service, body)
    everything = got["everything"]
    assert [e.position for e in everything] == list(range(1, head + 1))  # type: ignore[attr-defined]
    assert [e.position for e in got["later"]] == [head - 1, head]  # type: ignore[attr-defined]
    assert {e.org_id for e in got["org"]} == {ids["org_id"]}  # type: ignore[attr-defined]
    assert len(got["org"]) > 5  # type: ignore[arg-type]
    (revoked,) = got["revoked"]  # type: ignore[misc]
    assert revoked.type == "ApiKey.Revoked" and revoked.environment == "live" and revoked.version == 2
    assert [e.version for e in got["one"]] == [1, 2]  # type: ignore[attr-defined]
    live = got["live"]
    assert live.type == "Organization.RateLimitChanged" and live.org_id == ids["other_org"]  # type: ignore[attr-defined]
    assert json.loads(live.data_json) == {"rate_rps": 8.0, "rate_burst": None}  # type: ignore[attr-defined]


def test_get_history_lists_every_version_with_time(service_factory: ServiceFactory) -> None:
    service = grpc_service(service_factory)
    ids = build_history(service)
    md = auth(service)

    async def body(channel: grpc.aio.Channel) -> tuple[object, grpc.aio.AioRpcError, grpc.aio.AioRpcError]:
        stub = audit_pb2_grpc.AuditServiceStub(channel)
        found = await stub.GetHistory(audit_pb2.GetHistoryRequest(aggregate_id=ids["org_id"]), metadata=md)
        with pytest.raises(grpc.aio.AioRpcError) as bad:
            await stub.GetHistory(audit_pb2.GetHistoryRequest(aggregate_id="nonsense"), metadata=md)
        with pytest.raises(grpc.aio.AioRpcError) as missing:
            await stub.GetHistory(audit_pb2.GetHistoryRequest(aggregate_id="ord_" + "0" * 32), metadata=md)
        return found, bad.value, missing.value

    found, bad, missing = with_channel(service, body)
    events = list(found.events)  # type: ignore[attr-defined]
    assert [e.version for e in events] == list(range(1, len(events) + 1))
    assert events[0].type == "Organization.Created" and events[0].aggregate_id == str(parse_id("org", ids["org_id"]))
    assert json.loads(events[0].data_json)["name"] == "Audited"
    assert all(e.timestamp.endswith("Z") for e in events)
    assert bad.code() == grpc.StatusCode.INVALID_ARGUMENT and trailer(bad, "error-field") == "aggregate_id"
    assert missing.code() == grpc.StatusCode.NOT_FOUND and trailer(missing, "error-code") == "not_found"


def test_verify_projections_and_chain(service_factory: ServiceFactory) -> None:
    service = grpc_service(service_factory)
    build_history(service)
    md = auth(service)

    async def body(channel: grpc.aio.Channel) -> tuple[object, object, object]:
        stub = audit_pb2_grpc.AuditServiceStub(channel)
        projections = await stub.VerifyProjections(audit_pb2.VerifyProjectionsRequest(), metadata=md)
        intact = await stub.VerifyChain(audit_pb2.VerifyChainRequest(), metadata=md)
        await asyncio.to_thread(tamper_event, service, 3)
        broken = await stub.VerifyChain(audit_pb2.VerifyChainRequest(), metadata=md)
        return projections, intact, broken

    projections, intact, broken = with_channel(service, body)
    assert projections.identical and projections.events == projections.position > 0  # type: ignore[attr-defined]
    assert all(t.identical for t in projections.tables)  # type: ignore[attr-defined]
    head = service.container.store.recorder.max_notification_id()
    assert intact.intact and intact.sealed_through == head  # type: ignore[attr-defined]
    assert not broken.intact and (broken.problem, broken.first_bad_position) == ("changed", 3)  # type: ignore[attr-defined]


def test_audit_service_refuses_callers_without_the_token(service_factory: ServiceFactory) -> None:
    service = grpc_service(service_factory)

    async def body(channel: grpc.aio.Channel) -> grpc.StatusCode:
        stub = audit_pb2_grpc.AuditServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            async for _ in stub.StreamEvents(audit_pb2.StreamEventsRequest()):
                pass
        return refused.value.code()

    assert with_channel(service, body) == grpc.StatusCode.UNAUTHENTICATED
