"""partnerapi.v2 under its own names (one request and one response message per RPC, as buf
lint STANDARD asks), and the deprecated v1 RPCs answering the same bytes through it."""

from __future__ import annotations

from typing import Any

import grpc
from conftest import ServiceFactory
from grpc_support import auth, grpc_service, with_channel
from test_grpc_fulfillment import as_alice, live_order

from partnerapi.v1 import admin_pb2 as admin_v1
from partnerapi.v1 import admin_pb2_grpc as admin_v1_grpc
from partnerapi.v1 import audit_pb2 as audit_v1
from partnerapi.v1 import audit_pb2_grpc as audit_v1_grpc
from partnerapi.v2 import (
    admin_pb2,
    admin_pb2_grpc,
    audit_pb2,
    audit_pb2_grpc,
    fulfillment_pb2,
    fulfillment_pb2_grpc,
)


def test_admin_service_under_the_v2_names(service_factory: ServiceFactory) -> None:
    service = grpc_service(service_factory, allow_http_webhooks=True)
    md = auth(service)

    async def body(channel: grpc.aio.Channel) -> dict[str, Any]:
        stub = admin_pb2_grpc.AdminServiceStub(channel)
        deployment = await stub.GetDeployment(admin_pb2.GetDeploymentRequest())  # no token
        created = await stub.CreateOrganization(
            admin_pb2.CreateOrganizationRequest(name="Acme", rate_rps=5), metadata=md
        )
        org_id = created.organization.id
        fetched = await stub.GetOrganization(admin_pb2.GetOrganizationRequest(org_id=org_id), metadata=md)
        limited = await stub.SetRateLimit(
            admin_pb2.SetRateLimitRequest(org_id=org_id, rate_burst=7), metadata=md
        )
        issued = await stub.CreateApiKey(
            admin_pb2.CreateApiKeyRequest(org_id=org_id, environment="live", preset="read"), metadata=md
        )
        rotated = await stub.RotateApiKey(admin_pb2.RotateApiKeyRequest(key_id=issued.key.id), metadata=md)
        revoked = await stub.RevokeApiKey(admin_pb2.RevokeApiKeyRequest(key_id=issued.key.id), metadata=md)
        listed = await stub.ListApiKeys(admin_pb2.ListApiKeysRequest(org_id=org_id), metadata=md)
        balance = await stub.CreditWallet(
            admin_pb2.CreditWalletRequest(org_id=org_id, amount_cents=700), metadata=md
        )
        hook = await stub.SetWebhookEndpoint(
            admin_pb2.SetWebhookEndpointRequest(org_id=org_id, url="http://127.0.0.1:9/h"), metadata=md
        )
        v1 = admin_v1_grpc.AdminServiceStub(channel)
        old = await v1.GetOrganization(admin_v1.GetOrganizationRequest(org_id=org_id), metadata=md)
        return locals()

    got = with_channel(service, body)
    assert got["deployment"].deployment_id == service.container.deployment_id
    assert service.container.deployment_id.startswith("dep_")
    org = got["created"].organization
    assert org.name == "Acme" and org.rate_rps == 5 and got["fetched"].organization == org
    assert got["limited"].organization.rate_burst == 7
    key, rotated = got["issued"].key, got["rotated"].key
    assert key.secret.startswith("pk_live_") and (key.environment, key.preset) == ("live", "read")
    assert rotated.replaces == key.id and rotated.id != key.id
    assert got["revoked"] == admin_pb2.RevokeApiKeyResponse(id=key.id, revoked=True)
    assert {k.id for k in got["listed"].keys} == {key.id, rotated.id}
    assert got["balance"] == admin_pb2.CreditWalletResponse(org_id=org.id, balance_cents=700)
    assert got["hook"].secret.startswith("whsec_")
    # v1 answers with the resource v2 wraps, byte for byte.
    assert got["old"].SerializeToString() == got["limited"].organization.SerializeToString()


def test_streams_and_reports_under_the_v2_names(service_factory: ServiceFactory) -> None:
    service = grpc_service(service_factory)
    order_id, _, _ = live_order(service)
    md = auth(service)

    async def body(channel: grpc.aio.Channel) -> dict[str, Any]:
        audit = audit_pb2_grpc.AuditServiceStub(channel)
        events = [e async for e in audit.StreamEvents(audit_pb2.StreamEventsRequest(), metadata=md)]
        old = audit_v1_grpc.AuditServiceStub(channel).StreamEvents(
            audit_v1.StreamEventsRequest(), metadata=md
        )
        old_events = [e async for e in old]
        work = fulfillment_pb2_grpc.FulfillmentServiceStub(channel)
        items = [i async for i in work.StreamWork(fulfillment_pb2.StreamWorkRequest(), metadata=md)]
        request = fulfillment_pb2.ReportStepRequest(
            order_id=order_id, step="register", outcome=fulfillment_pb2.STEP_OUTCOME_DONE
        )
        reported = await work.ReportStep(request, metadata=as_alice(service))
        retried = await work.ReportStep(request, metadata=as_alice(service))
        return locals()

    got = with_channel(service, body)
    events, old_events = got["events"], got["old_events"]
    assert events and all(isinstance(e, audit_pb2.StreamEventsResponse) for e in events)
    assert [e.event.SerializeToString() for e in events] == [e.SerializeToString() for e in old_events]
    assert [item.item.order_id for item in got["items"]] == [order_id]
    report = got["reported"].report
    assert report.applied and report.operator == "alice@fulfillment" and report.step == "register"
    assert not got["retried"].report.applied  # already done: nothing moves
