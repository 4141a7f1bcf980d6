"""FulfillmentService over a real grpc.aio client: the work list with stuck work on the injected
clock, the live stream, step reports (done, failed, needing partner input) recorded with the
operator's name and safe to repeat, retries, burned domains, errors and refused callers."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import pytest
from conftest import PATIENCE, RunningService, ServiceFactory, free_port
from grpc_support import ROLES, auth, grpc_service, trailer, with_channel
from sandbox_clock_support import advance
from test_orders_sandbox import counts, new_workspace, place, placed
from test_wallet_purchase import buy, credit

from audit.replay import replay
from infra.clock import ManualClock
from infra.ids import parse_id
from partnerapi.v1 import fulfillment_pb2 as pb
from partnerapi.v1 import fulfillment_pb2_grpc

DONE = pb.STEP_OUTCOME_DONE
FAILED = pb.STEP_OUTCOME_FAILED
NEEDS_INPUT = pb.STEP_OUTCOME_NEEDS_PARTNER_INPUT
Stub = fulfillment_pb2_grpc.FulfillmentServiceStub


def as_alice(service: RunningService) -> tuple[tuple[str, str], ...]:
    return (*auth(service), ("x-operator", "alice@fulfillment"))


def live_order(service: RunningService) -> tuple[str, str, str]:
    """A live order the worker does not run (no worker role): (order id, org id, key)."""
    org = service.new_org()
    secret = service.new_key(org, "live")
    credit(service, org, 10_000)
    with service.client(secret) as live:
        response = place(live, counts(new_workspace(live), a=1))
        assert response.status_code == 201, response.text
        return str(response.json()["data"]["id"]), org, secret


def call(service: RunningService, body: Callable[[Stub], Awaitable[Any]]) -> Any:
    async def run(channel: grpc.aio.Channel) -> Any:
        return await body(Stub(channel))  # type: ignore[no-untyped-call]

    return with_channel(service, run)


def report(service: RunningService, order_id: str, step: str, outcome: int = DONE, **fields: Any) -> Any:
    request = pb.ReportStepRequest(order_id=order_id, step=step, outcome=outcome, **fields)
    return call(service, lambda stub: stub.ReportStep(request, metadata=as_alice(service)))


def rpc_error(service: RunningService, body: Callable[[Stub], Awaitable[Any]]) -> grpc.aio.AioRpcError:
    async def failing(stub: Stub) -> grpc.aio.AioRpcError:
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            await body(stub)
        return failed.value

    error: grpc.aio.AioRpcError = call(service, failing)
    return error


def event_names(service: RunningService, order_id: str) -> list[str]:
    events = service.container.store.recorder.select_events(parse_id("ord", order_id))
    return [e.topic.rsplit(".", 1)[-1] for e in events]


def operator_reports(service: RunningService) -> list[dict[str, Any]]:
    store = service.container.store
    found = []
    for notification in store.recorder.select_notifications(start=1, limit=10_000):
        event = store.mapper.to_domain_event(notification)
        if type(event).__qualname__ == "FulfillmentReport.Recorded":
            found.append({"operator": event.operator, "action": event.action, **event.subject})
    return found


def test_list_work_flags_stuck_orders_and_done_reports_move_them(service_factory: ServiceFactory) -> None:
    clock = ManualClock()
    service = grpc_service(service_factory, clock=clock)
    order_id, org, _ = live_order(service)
    md = as_alice(service)

    service.wait_projections()  # ListWork reads a projection
    listed = call(service, lambda stub: stub.ListWork(pb.ListWorkRequest(), metadata=md))
    (item,) = listed.items
    assert (item.order_id, item.org_id, item.status, item.next_step) == (order_id, org, "in_progress", "register")
    assert not item.stuck and listed.stuck_after_seconds == 60
    assert not call(service, lambda s: s.ListWork(pb.ListWorkRequest(stuck_only=True), metadata=md)).items
    clock.advance(61)
    (stuck,) = call(service, lambda s: s.ListWork(pb.ListWorkRequest(stuck_only=True), metadata=md)).items
    assert stuck.stuck and stuck.idle_seconds == pytest.approx(61)
    tight = pb.ListWorkRequest(stuck_only=True, stuck_after_seconds=100)
    assert not call(service, lambda s: s.ListWork(tight, metadata=md)).items
    for endless in (float("nan"), float("inf"), -1.0):  # NaN would switch detection off
        bad = pb.ListWorkRequest(stuck_after_seconds=endless)
        refused = rpc_error(service, lambda s, bad=bad: s.ListWork(bad, metadata=md))
        assert refused.code() == grpc.StatusCode.INVALID_ARGUMENT, endless
        assert trailer(refused, "error-field") == "stuck_after_seconds"

    first = report(service, order_id, "register")
    assert first.applied and first.operator == "alice@fulfillment" and first.order_status == "in_progress"
    again = report(service, order_id, "register")
    assert not again.applied and again.id != first.id
    out_of_turn = rpc_error(
        service,
        lambda s: s.ReportStep(pb.ReportStepRequest(order_id=order_id, step="sequencer", outcome=DONE), metadata=md),
    )
    assert out_of_turn.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert trailer(out_of_turn, "error-code") == "order_state_conflict"
    keyed = report(service, order_id, "dns", request_id="dns-1")
    replayed = report(service, order_id, "dns", request_id="dns-1")
    assert keyed.applied and replayed.replayed and replayed.id == keyed.id
    for step in ("mailboxes", "sequencer"):
        report(service, order_id, step)
    service.wait_projections()
    assert not call(service, lambda s: s.ListWork(pb.ListWorkRequest(), metadata=md)).items

    assert event_names(service, order_id) == [
        "Placed", "StepCompleted", "StepCompleted", "StepCompleted", "StepCompleted", "Completed"
    ]
    with service.client(service.new_key(org, "live")) as live:
        order = live.get(f"/orders/{order_id}").json()["data"]
    assert order["status"] == "completed" and len(order["domains"][0]["inboxes"]) == 3
    recorded = operator_reports(service)
    assert {r["operator"] for r in recorded} == {"alice@fulfillment"}
    assert [r["step"] for r in recorded] == ["register", "register", "dns", "mailboxes", "sequencer"]


def test_failed_step_waits_for_retry_and_partner_input_opens_an_action(
    service_factory: ServiceFactory,
) -> None:
    service = grpc_service(service_factory, clock=ManualClock())
    order_id, org, secret = live_order(service)
    md = as_alice(service)

    failed = report(service, order_id, "register", FAILED, reason="registrar timed out")
    assert failed.applied and failed.order_status == "in_progress"
    service.wait_projections()
    (item,) = call(service, lambda s: s.ListWork(pb.ListWorkRequest(), metadata=md)).items
    assert (item.failed_step, item.reason) == ("register", "registrar timed out")
    assert not report(service, order_id, "register", FAILED, reason="again").applied
    retry = pb.RetryStepRequest(order_id=order_id, step="register")
    assert call(service, lambda s: s.RetryStep(retry, metadata=md)).applied
    assert not call(service, lambda s: s.RetryStep(retry, metadata=md)).applied
    service.wait_projections()
    (item,) = call(service, lambda s: s.ListWork(pb.ListWorkRequest(), metadata=md)).items
    assert item.failed_step == "" and item.next_step == "register"

    waiting = report(service, order_id, "register", NEEDS_INPUT, reason="Send a public picture URL.")
    assert waiting.order_status == "action_required" and waiting.pending_action_id.startswith("act_")
    service.wait_projections()  # pending actions are listed from a projection
    with service.client(secret) as live:
        pending = live.get("/orders/pending", params={"order_id": order_id}).json()["data"]
        assert [p["id"] for p in pending] == [waiting.pending_action_id]
        resolved = live.post(
            f"/orders/pending/{waiting.pending_action_id}/resolve",
            json={"profile_picture_url": "https://cdn.example.com/face.png"},
        )
        assert resolved.status_code == 200, resolved.text

    given_up = report(service, order_id, "register", FAILED, reason="registrar gone", fail_order=True)
    assert given_up.order_status == "failed"
    with service.client(secret) as live:
        order = live.get(f"/orders/{order_id}").json()["data"]
        assert order["status"] == "failed" and order["refunded_cents"] == order["charged_cents"] > 0
    names = event_names(service, order_id)
    assert names == ["Placed", "StepFailed", "StepRetried", "ActionRequired", "Resumed", "Failed"]
    assert [r["action"] for r in operator_reports(service)] == [
        "report_step", "report_step", "retry_step", "retry_step", "report_step", "report_step"
    ]
    c = service.container
    replayed = replay(c.settings, c.store, c.read_models)  # the new events rebuild the same rows
    assert replayed.identical, replayed.as_json()


def test_failing_a_waiting_order_closes_its_pending_action(service_factory: ServiceFactory) -> None:
    service = grpc_service(service_factory, clock=ManualClock())
    order_id, _, secret = live_order(service)
    waiting = report(service, order_id, "register", NEEDS_INPUT, reason="Send a public picture URL.")
    assert waiting.order_status == "action_required"
    given_up = report(service, order_id, "register", FAILED, reason="registrar gone", fail_order=True)
    assert given_up.order_status == "failed"
    service.wait_projections()
    with service.client(secret) as live:
        pending = live.get("/orders/pending", params={"order_id": order_id}).json()["data"]
        assert [(p["id"], p["status"]) for p in pending] == [
            (waiting.pending_action_id, "cancelled")
        ]


def test_stream_work_sends_current_work_then_follows_changes(service_factory: ServiceFactory) -> None:
    service = grpc_service(service_factory, clock=ManualClock())
    first, _, _ = live_order(service)
    md = as_alice(service)

    async def body(stub: Stub) -> list[Any]:
        stream = stub.StreamWork(pb.StreamWorkRequest(follow=True), metadata=md)
        seen = [await asyncio.wait_for(stream.read(), timeout=PATIENCE)]
        second, _, _ = await asyncio.to_thread(live_order, service)
        seen.append(await asyncio.wait_for(stream.read(), timeout=PATIENCE))
        await asyncio.to_thread(report, service, second, "register")
        seen.append(await asyncio.wait_for(stream.read(), timeout=PATIENCE))
        stream.cancel()
        return [*seen, second]

    current, placed, stepped, second = call(service, body)
    assert current.order_id == first and current.next_step == "register"
    assert placed.order_id == second and placed.status == "in_progress" and placed.position > 0
    assert stepped.order_id == second and list(stepped.steps_done) == ["register"]
    assert stepped.position > placed.position


def burnable_domain(service_factory: ServiceFactory) -> tuple[RunningService, Any, str]:
    """A gRPC service, an operator's call metadata, and a domain of a completed order."""
    service = grpc_service(service_factory, roles=[*ROLES, "worker"])  # completes it
    with service.partner() as client:
        order = placed(client, counts(new_workspace(client), a=1))
    return service, as_alice(service), order["domains"][0]["domain"]


def test_mark_domain_burned_starts_a_job(service_factory: ServiceFactory) -> None:
    service, md, name = burnable_domain(service_factory)
    request = pb.MarkDomainBurnedRequest(domain=name, reason="blocklisted", request_id="burn-1")
    burned = call(service, lambda s: s.MarkDomainBurned(request, metadata=md))
    assert burned.job_id.startswith("brj_") and burned.applied and burned.action == "mark_domain_burned"
    job = json.loads(burned.job_json)
    assert job["domain"]["domain"] == name and job["operator"] == "alice@fulfillment"
    again = call(service, lambda s: s.MarkDomainBurned(request, metadata=md))
    assert again.replayed and again.job_id == burned.job_id

    unknown = rpc_error(
        service,
        lambda s: s.MarkDomainBurned(pb.MarkDomainBurnedRequest(domain="nobody-owns-this.com", reason="x"), metadata=md),
    )
    assert unknown.code() == grpc.StatusCode.NOT_FOUND and trailer(unknown, "error-code") == "not_found"
    no_reason = rpc_error(
        service, lambda s: s.MarkDomainBurned(pb.MarkDomainBurnedRequest(domain=name), metadata=md)
    )
    assert no_reason.code() == grpc.StatusCode.INVALID_ARGUMENT and trailer(no_reason, "error-field") == "reason"


def test_bad_reports_map_to_status_codes_with_stable_codes(service_factory: ServiceFactory) -> None:
    service = grpc_service(service_factory, clock=ManualClock())
    order_id, _, _ = live_order(service)
    md = as_alice(service)

    def failing(**fields: Any) -> grpc.aio.AioRpcError:
        request = pb.ReportStepRequest(**fields)
        return rpc_error(service, lambda s: s.ReportStep(request, metadata=md))

    cases = {
        "order_id": failing(order_id="nope", step="register", outcome=DONE),
        "step": failing(order_id=order_id, step="paint", outcome=DONE),
        "outcome": failing(order_id=order_id, step="register"),
        "reason": failing(order_id=order_id, step="register", outcome=FAILED),
        "input_field": failing(order_id=order_id, step="register", outcome=NEEDS_INPUT, reason="x", input_field="zz"),
    }
    for field, error in cases.items():
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, field
        assert (trailer(error, "error-code"), trailer(error, "error-field")) == ("invalid_request", field)
    missing = failing(order_id="ord_" + "0" * 32, step="register", outcome=DONE)
    assert missing.code() == grpc.StatusCode.NOT_FOUND and trailer(missing, "error-field") == "order_id"
    report(service, order_id, "register", request_id="r-1")
    reused = failing(order_id=order_id, step="dns", outcome=DONE, request_id="r-1")
    assert reused.code() == grpc.StatusCode.ABORTED and trailer(reused, "error-code") == "idempotency_conflict"
    # The same step and outcome asking for more (failing the order, another reason) is another
    # report, not a retry of the first.
    report(service, order_id, "dns", FAILED, reason="resolver down", request_id="d-1")
    for changed in ({"reason": "other"}, {"reason": "resolver down", "fail_order": True}):
        again = failing(order_id=order_id, step="dns", outcome=FAILED, request_id="d-1", **changed)
        assert trailer(again, "error-code") == "idempotency_conflict", changed
    same = report(service, order_id, "dns", FAILED, reason="resolver down", request_id="d-1")
    assert same.replayed
    not_failed = rpc_error(
        service,
        lambda s: s.RetryStep(pb.RetryStepRequest(order_id=order_id, step="sequencer"), metadata=md),
    )
    assert not_failed.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert trailer(not_failed, "error-code") == "order_state_conflict"
    malformed = rpc_error(service, lambda s: s.MarkDomainBurned(
        pb.MarkDomainBurnedRequest(domain="not a domain!", reason="x"), metadata=md))
    assert malformed.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert trailer(malformed, "error-field") == "domain"


def test_worker_holds_a_failed_step_and_resumes_after_retry(service_factory: ServiceFactory) -> None:
    clock = ManualClock()
    roles = ["gateway", "projections", "grpc", "worker"]
    service = service_factory(clock, roles, grpc_port=free_port(), fulfillment_step_seconds=1.0)
    held, _, _ = live_order(service)
    report(service, held, "register", FAILED, reason="registrar timed out")
    moving, _, _ = live_order(service)

    def run_until_completed(order_id: str) -> None:
        deadline = time.monotonic() + PATIENCE
        while "Completed" not in event_names(service, order_id):
            assert time.monotonic() < deadline, event_names(service, order_id)
            clock.advance(1.0)
            time.sleep(0.05)

    run_until_completed(moving)  # the worker ran every step of the other order meanwhile
    assert event_names(service, held) == ["Placed", "StepFailed"]
    retry = pb.RetryStepRequest(order_id=held, step="register")
    assert call(service, lambda s: s.RetryStep(retry, metadata=as_alice(service))).applied
    run_until_completed(held)
    names = event_names(service, held)
    assert names[:3] == ["Placed", "StepFailed", "StepRetried"] and names.count("StepCompleted") == 4


def test_fulfillment_service_refuses_callers_without_the_token(service_factory: ServiceFactory) -> None:
    service = grpc_service(service_factory)
    wrong = (("authorization", "Bearer op_wrong"),)

    async def body(stub: Stub) -> list[grpc.StatusCode]:
        codes = []
        calls = [
            lambda: stub.ListWork(pb.ListWorkRequest(), metadata=wrong),
            lambda: stub.ReportStep(pb.ReportStepRequest(), metadata=wrong),
            lambda: stub.RetryStep(pb.RetryStepRequest()),
            lambda: stub.MarkDomainBurned(pb.MarkDomainBurnedRequest()),
        ]
        for unary in calls:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await unary()
            codes.append(refused.value.code())
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            async for _ in stub.StreamWork(pb.StreamWorkRequest()):
                pass
        codes.append(refused.value.code())
        return codes

    assert call(service, body) == [grpc.StatusCode.UNAUTHENTICATED] * 5
    assert operator_reports(service) == []


def test_concurrent_mark_domain_burned_with_one_request_id_starts_one_job(
    service_factory: ServiceFactory,
) -> None:
    """Retries of one MarkDomainBurned (same request_id) racing each other: the job and its
    report are one save, so one job starts and every caller gets it."""
    service, md, name = burnable_domain(service_factory)
    request = pb.MarkDomainBurnedRequest(domain=name, reason="blocklisted", request_id="burn-race")

    def mark() -> Any:
        return call(service, lambda s: s.MarkDomainBurned(request, metadata=md))

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: mark(), range(4)))
    assert len({a.job_id for a in answers}) == 1
    assert sum(not a.replayed for a in answers) == 1
    jobs = [e for e in service.container.store.recorder.select_notifications(start=1, limit=10_000)
            if e.topic.endswith("BurnedDomainJob.Started")]
    assert len(jobs) == 1


def test_a_purchase_cannot_be_reported_waiting_on_the_partner(
    service_factory: ServiceFactory,
) -> None:
    """The one partner input (a profile picture) is for mailboxes: a purchase has none."""
    service = grpc_service(service_factory, clock=ManualClock())
    org = service.new_org()
    secret = service.new_key(org, "live")
    credit(service, org, 10_000)
    with service.client(secret) as live:
        purchase = buy(live, "no-input.com").json()["data"]
    request = pb.ReportStepRequest(order_id=purchase["id"], step="register",
                                   outcome=NEEDS_INPUT, reason="Send a picture.")
    refused = rpc_error(service, lambda s: s.ReportStep(request, metadata=as_alice(service)))
    assert refused.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert (trailer(refused, "error-code"), trailer(refused, "error-field")) == (
        "invalid_request", "outcome")
    with service.client(secret) as live:
        assert live.get(f"/orders/{purchase['id']}").json()["data"]["status"] == "in_progress"


def test_a_report_on_a_sandbox_order_is_stamped_on_its_sandbox_clock(
    service_factory: ServiceFactory,
) -> None:
    """Decisions 6: every timestamp of a sandbox's resources reads its clock, the operator's
    moves included (they were stamped on real time, before the order's own created_at)."""
    service = grpc_service(service_factory, clock=ManualClock(), roles=(*ROLES, "worker"))
    with service.partner() as sandbox:
        advance(sandbox, seconds=3_600)
        body = counts(new_workspace(sandbox), a=1, profile_picture_url="http://private.local/a.png")
        waiting = placed(sandbox, body)
        assert waiting["status"] == "action_required", waiting
        failed = report(service, waiting["id"], "register", FAILED, reason="gone", fail_order=True)
        assert failed.order_status == "failed"
        service.wait_projections()
        order = sandbox.get(f"/orders/{waiting['id']}").json()["data"]
        assert order["updated_at"] == order["created_at"] == waiting["created_at"]
        pending = sandbox.get("/orders/pending", params={"order_id": waiting["id"]}).json()["data"]
        assert [p["resolved_at"] for p in pending] == [order["created_at"]]


def test_a_finished_sandbox_order_has_no_next_step(service_factory: ServiceFactory) -> None:
    """The sandbox completes an order without recording its steps: `next_step` is empty once
    it is finished (the proto: "empty when every step ran"), not the first step."""
    service = grpc_service(service_factory, roles=[*ROLES, "worker"])
    md = as_alice(service)

    async def body(stub: Stub) -> Any:
        stream = stub.StreamWork(pb.StreamWorkRequest(follow=True), metadata=md)
        with service.partner() as client:
            order = await asyncio.to_thread(placed, client, counts(new_workspace(client), a=1))
        while True:
            item = await asyncio.wait_for(stream.read(), timeout=PATIENCE)
            if item.order_id == order["id"] and item.status == "completed":
                stream.cancel()
                return item

    finished = call(service, body)
    assert (list(finished.steps_done), finished.next_step) == ([], "")
