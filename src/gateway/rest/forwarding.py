"""Domain forwarding (decisions.md 3): submit a `fwj_` job, read it."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
from litestar import Controller, Request, get, post

from gateway.rest.auth import principal_of
from gateway.rest.lists import container_of
from services.forwarding import __doc__ as FORWARDING_RULES
from services.forwarding import load_job, submit


class ForwardingBody(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    domains: list[str]
    forwarding_url: str


class ForwardingController(Controller):
    path = "/domains/forwarding"
    tags = ["domain forwarding"]

    @post(
        operation_id="setDomainForwarding",
        summary="Set a forwarding URL on up to 50 domains",
        description=FORWARDING_RULES,
        status_code=201,
    )
    async def create(self, request: Request[Any, Any, Any], data: ForwardingBody) -> dict[str, Any]:
        container, principal = container_of(request), principal_of(request)
        body = msgspec.to_builtins(data)
        return {"data": await anyio.to_thread.run_sync(lambda: submit(container, principal, body))}

    @get("/jobs/{job_id:str}", operation_id="getForwardingJob", summary="One forwarding job")
    async def get_job(self, request: Request[Any, Any, Any], job_id: str) -> dict[str, Any]:
        return {"data": load_job(container_of(request), principal_of(request), job_id)}
