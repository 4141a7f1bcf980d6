"""Domain forwarding (decisions.md 3): submit a `fwj_` job, read it."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import anyio
import msgspec
from litestar import Controller, Request, Response, get, post

from gateway.rest.auth import principal_of
from gateway.rest.idempotency import maybe_idempotent
from gateway.rest.lists import container_of
from gateway.rest.schema_notes import ResponseDoc
from schema.rules import HttpUrl, documented
from services.domains.forwarding import MAX_DOMAINS, load_job, submit
from services.domains.forwarding import __doc__ as FORWARDING_RULES


def _items(least: int, most: int) -> msgspec.Meta:
    return documented(min_items=least, max_items=most)


# Documentation only (`extra_json_schema`): the service checks these bounds itself, to answer
# the spec-7 envelope with its own message and `field`; msgspec does not enforce them.
class ForwardingBody(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    domains: Annotated[list[str], _items(1, MAX_DOMAINS)]
    forwarding_url: HttpUrl


class ForwardingJobOut(msgspec.Struct):
    """A forwarding job (`fwj_`); the domain lists hold names."""

    id: str
    status: Literal["in_progress", "completed", "failed"]
    forwarding_url: str
    completed: list[str]
    pending: list[str]
    failed: list[str]
    reason: str | None
    created_at: str
    completed_at: str | None


class ForwardingJobResponse(msgspec.Struct):
    data: ForwardingJobOut


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
    async def create(self, request: Request[Any, Any, Any], data: ForwardingBody) -> Response[Any]:
        container, principal = container_of(request), principal_of(request)
        body = msgspec.to_builtins(data)
        return await maybe_idempotent(request, lambda: {"data": submit(container, principal, body)})

    @get(
        "/jobs/{job_id:str}",
        operation_id="getForwardingJob",
        description="A forwarding job: the URL set and each domain's outcome.",
        summary="One forwarding job",
        responses={200: ONE_JOB},
    )
    async def get_job(self, request: Request[Any, Any, Any], job_id: str) -> dict[str, Any]:
        container, principal = container_of(request), principal_of(request)
        return {
            "data": await anyio.to_thread.run_sync(lambda: load_job(container, principal, job_id))
        }
