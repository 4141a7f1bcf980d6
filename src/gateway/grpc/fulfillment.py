"""FulfillmentService: the fulfillment team's work list and its reports on each step,
translated to the use cases in `services/fulfillment/work.py` and `fulfillment_reports.py`.

Every report names the operator (`operator_of`: metadata `x-operator`, else the client
certificate), which the recorded events keep.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, TypeVar

import msgspec
from grpc.aio import ServicerContext

from gateway.grpc.interceptor import operator_of
from infra.blocking import run_blocking
from partnerapi.v2 import fulfillment_pb2, fulfillment_pb2_grpc
from partnerapi.v2.fulfillment_pb2 import (
    ListWorkRequest,
    ListWorkResponse,
    MarkDomainBurnedRequest,
    MarkDomainBurnedResponse,
    ReportStepRequest,
    ReportStepResponse,
    RetryStepRequest,
    RetryStepResponse,
    StreamWorkRequest,
    StreamWorkResponse,
)
from services.fulfillment import reports
from services.fulfillment.commands import (
    ListWork,
    MarkDomainBurned,
    ReportStep,
    RetryStep,
    StreamWork,
)
from services.fulfillment.work import list_work, work_changes, work_position
from views.fulfillment_reports import OperatorReport
from views.fulfillment_work import WorkItem

if TYPE_CHECKING:
    from runtime.container import Container

Report = TypeVar("Report", ReportStep, RetryStep, MarkDomainBurned)

OUTCOME_NAMES = {
    fulfillment_pb2.STEP_OUTCOME_DONE: reports.DONE,
    fulfillment_pb2.STEP_OUTCOME_FAILED: reports.STEP_FAILED,
    fulfillment_pb2.STEP_OUTCOME_NEEDS_PARTNER_INPUT: reports.NEEDS_INPUT,
}


def work_item(item: WorkItem) -> fulfillment_pb2.WorkItem:
    return fulfillment_pb2.WorkItem(**msgspec.structs.asdict(item))


def operator_report(view: OperatorReport) -> fulfillment_pb2.OperatorReport:
    fields = {name: value for name, value in msgspec.structs.asdict(view).items() if name != "job"}
    job = view.job
    return fulfillment_pb2.OperatorReport(**fields, job_json=json.dumps(job) if job else "")


def list_query(request: ListWorkRequest) -> ListWork:
    return ListWork(
        stuck_only=request.stuck_only,
        stuck_after_seconds=request.stuck_after_seconds,
        org_id=request.org_id,
    )


def stream_query(request: StreamWorkRequest) -> StreamWork:
    return StreamWork(
        stuck_after_seconds=request.stuck_after_seconds,
        org_id=request.org_id,
        follow=request.follow,
    )


def report_command(request: ReportStepRequest) -> ReportStep:
    return ReportStep(
        order_id=request.order_id,
        step=request.step,
        outcome=OUTCOME_NAMES.get(request.outcome, ""),
        reason=request.reason,
        input_field=request.input_field,
        fail_order=request.fail_order,
        request_id=request.request_id,
    )


class FulfillmentServicer(fulfillment_pb2_grpc.FulfillmentServiceServicer):
    def __init__(self, container: Container) -> None:
        self.c = container

    async def _report(
        self,
        use_case: Callable[[Container, str, Report], OperatorReport],
        context: ServicerContext[object, object],
        command: Report,
    ) -> fulfillment_pb2.OperatorReport:
        """Run a report's use case as the calling operator."""
        operator = operator_of(context)
        view = await run_blocking(use_case, self.c, operator, command)
        return operator_report(view)

    async def ListWork(
        self, request: ListWorkRequest, context: ServicerContext[ListWorkRequest, ListWorkResponse]
    ) -> ListWorkResponse:
        work = await run_blocking(list_work, self.c, list_query(request))
        return ListWorkResponse(
            items=[work_item(item) for item in work.items],
            stuck_after_seconds=work.stuck_after_seconds,
        )

    async def StreamWork(
        self,
        request: StreamWorkRequest,
        context: ServicerContext[StreamWorkRequest, StreamWorkResponse],
    ) -> AsyncIterator[StreamWorkResponse]:
        query = stream_query(request)
        # The position first, then the list: a change in between arrives twice, never not at all.
        position = await run_blocking(work_position, self.c)
        listing = ListWork(stuck_after_seconds=query.stuck_after_seconds, org_id=query.org_id)
        current = await run_blocking(list_work, self.c, listing)
        for item in current.items:
            yield StreamWorkResponse(item=work_item(item))
        while query.follow:
            changed, reached = await run_blocking(
                work_changes, self.c, query, position
            )
            for item in changed:
                yield StreamWorkResponse(item=work_item(item))
            if reached == position:
                await asyncio.sleep(self.c.settings.poll_interval_seconds)
            position = reached

    async def ReportStep(
        self,
        request: ReportStepRequest,
        context: ServicerContext[ReportStepRequest, ReportStepResponse],
    ) -> ReportStepResponse:
        report = await self._report(reports.report_step, context, report_command(request))
        return ReportStepResponse(report=report)

    async def RetryStep(
        self,
        request: RetryStepRequest,
        context: ServicerContext[RetryStepRequest, RetryStepResponse],
    ) -> RetryStepResponse:
        command = RetryStep(
            order_id=request.order_id, step=request.step, request_id=request.request_id
        )
        report = await self._report(reports.retry_step, context, command)
        return RetryStepResponse(report=report)

    async def MarkDomainBurned(
        self,
        request: MarkDomainBurnedRequest,
        context: ServicerContext[MarkDomainBurnedRequest, MarkDomainBurnedResponse],
    ) -> MarkDomainBurnedResponse:
        command = MarkDomainBurned(
            domain=request.domain, reason=request.reason, request_id=request.request_id
        )
        report = await self._report(reports.mark_domain_burned, context, command)
        return MarkDomainBurnedResponse(report=report)
