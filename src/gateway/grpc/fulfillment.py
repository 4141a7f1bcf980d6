"""FulfillmentService: the fulfillment team's work list and its reports on each step,
translated to the use cases in `services/fulfillment/work.py` and `fulfillment_reports.py`.

Every report names the operator (`operator_of`: metadata `x-operator`, else the client
certificate), which the recorded events keep.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio

from gateway.grpc.interceptor import operator_of
from partnerapi.v2 import fulfillment_pb2, fulfillment_pb2_grpc
from services.fulfillment import reports
from services.fulfillment.work import list_work, work_changes, work_position

if TYPE_CHECKING:
    from runtime.container import Container

OUTCOME_NAMES = {
    fulfillment_pb2.STEP_OUTCOME_DONE: reports.DONE,
    fulfillment_pb2.STEP_OUTCOME_FAILED: reports.STEP_FAILED,
    fulfillment_pb2.STEP_OUTCOME_NEEDS_PARTNER_INPUT: reports.NEEDS_INPUT,
}


def work_item(item: dict[str, Any]) -> fulfillment_pb2.WorkItem:
    return fulfillment_pb2.WorkItem(**item)


def operator_report(view: dict[str, Any]) -> fulfillment_pb2.OperatorReport:
    fields = {name: value for name, value in view.items() if name != "job"}
    job = view.get("job")
    return fulfillment_pb2.OperatorReport(**fields, job_json=json.dumps(job) if job else "")


class FulfillmentServicer(fulfillment_pb2_grpc.FulfillmentServiceServicer):
    def __init__(self, container: Container) -> None:
        self.c = container

    async def ListWork(self, request: Any, context: Any) -> Any:
        items, threshold = await anyio.to_thread.run_sync(
            partial(
                list_work,
                self.c,
                stuck_only=request.stuck_only,
                stuck_after=request.stuck_after_seconds,
                org_id=request.org_id,
            )
        )
        return fulfillment_pb2.ListWorkResponse(
            items=[work_item(item) for item in items], stuck_after_seconds=threshold
        )

    async def StreamWork(self, request: Any, context: Any) -> AsyncIterator[Any]:
        # The position first, then the list: a change in between arrives twice, never not at all.
        position = await anyio.to_thread.run_sync(work_position, self.c)
        current, _ = await anyio.to_thread.run_sync(
            partial(
                list_work,
                self.c,
                stuck_only=False,
                stuck_after=request.stuck_after_seconds,
                org_id=request.org_id,
            )
        )
        for item in current:
            yield fulfillment_pb2.StreamWorkResponse(item=work_item(item))
        while request.follow:
            changed, reached = await anyio.to_thread.run_sync(
                partial(
                    work_changes,
                    self.c,
                    after=position,
                    stuck_after=request.stuck_after_seconds,
                    org_id=request.org_id,
                )
            )
            for item in changed:
                yield fulfillment_pb2.StreamWorkResponse(item=work_item(item))
            if reached == position:
                await asyncio.sleep(self.c.settings.poll_interval_seconds)
            position = reached

    async def ReportStep(self, request: Any, context: Any) -> Any:
        view = await anyio.to_thread.run_sync(
            partial(
                reports.report_step,
                self.c,
                operator=operator_of(context),
                order_id=request.order_id,
                step=request.step,
                outcome=OUTCOME_NAMES.get(request.outcome, ""),
                reason=request.reason,
                input_field=request.input_field,
                fail_order=request.fail_order,
                request_id=request.request_id,
            )
        )
        return fulfillment_pb2.ReportStepResponse(report=operator_report(view))

    async def RetryStep(self, request: Any, context: Any) -> Any:
        view = await anyio.to_thread.run_sync(
            partial(
                reports.retry_step,
                self.c,
                operator=operator_of(context),
                order_id=request.order_id,
                step=request.step,
                request_id=request.request_id,
            )
        )
        return fulfillment_pb2.RetryStepResponse(report=operator_report(view))

    async def MarkDomainBurned(self, request: Any, context: Any) -> Any:
        view = await anyio.to_thread.run_sync(
            partial(
                reports.mark_domain_burned,
                self.c,
                operator=operator_of(context),
                domain=request.domain,
                reason=request.reason,
                request_id=request.request_id,
            )
        )
        return fulfillment_pb2.MarkDomainBurnedResponse(report=operator_report(view))
