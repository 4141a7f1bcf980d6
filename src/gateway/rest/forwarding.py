"""Domain forwarding (decisions.md 3): submit a `fwj_` job, read it."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post

from gateway.rest.auth import principal_of
from gateway.rest.idempotency import maybe_idempotent
from gateway.rest.lists import container_of
from gateway.rest.schema_notes import ResponseDoc
from infra.blocking import run_blocking
from services.domains.commands import SetForwarding
from services.domains.forwarding import __doc__ as FORWARDING_RULES
from services.domains.forwarding import load_job, submit
from views.jobs import ForwardingJobResponse

ONE_JOB = ResponseDoc(ForwardingJobResponse, description="The forwarding job")


class ForwardingController(Controller):
    path = "/domains/forwarding"
    tags = ["domain forwarding"]

    @post(
        operation_id="setDomainForwarding",
        summary="Set a forwarding URL on up to 50 domains",
        description=FORWARDING_RULES,
        status_code=201,
        responses={201: ONE_JOB},
    )
    async def create(
        self, request: Request[Any, Any, Any], data: SetForwarding
    ) -> Response[ForwardingJobResponse]:
        container, principal = container_of(request), principal_of(request)
        return await maybe_idempotent(
            request, lambda: ForwardingJobResponse(submit(container, principal, data))
        )

    @get(
        "/jobs/{job_id:str}",
        operation_id="getForwardingJob",
        description="A forwarding job: the URL set and each domain's outcome.",
        summary="One forwarding job",
        responses={200: ONE_JOB},
    )
    async def get_job(self, request: Request[Any, Any, Any], job_id: str) -> ForwardingJobResponse:
        container, principal = container_of(request), principal_of(request)
        return ForwardingJobResponse(
            await run_blocking(lambda: load_job(container, principal, job_id))
        )
