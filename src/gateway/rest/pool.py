"""The pre-warmed pool (spec 3, 4.1, 4.2; decisions.md 3): add, remove, attach, release, and
the pool's domains and operations."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import anyio
import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.openapi.datastructures import ResponseSpec

from domain.errors import invalid
from domain.pool_domains import CONDITIONS
from gateway.rest.auth import principal_of
from gateway.rest.idempotency import idempotent
from gateway.rest.lists import container_of, list_page
from projections.pool import condition_clause, render_pool_row
from services import pool_attach, pool_inventory
from services.burned_domains import load_burned_job
from services.pool_replacements import load_replacement
from webhooks.pool_events import __doc__ as POOL_EVENTS

ATTACH_IDEMPOTENCY = (
    "An optional `Idempotency-Key` header makes a retried attach safe: the same key and body "
    "answer the first reservation again (24 h), as on `POST /orders`."
)


class PoolDomainsBody(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    domains: list[str]


# The 200 of pool remove, documented with the exact shape of spec 4.1.
Count = Annotated[int, msgspec.Meta(ge=0)]


class PoolRemoveOutcome(msgspec.Struct, kw_only=True):
    domain: str
    outcome: Literal["removed", "absent"]


class PoolRemoveResult(msgspec.Struct, kw_only=True):
    removed: Count
    absent: Count
    inbox_count: Count
    domains: list[PoolRemoveOutcome]


class PoolRemoveResponse(msgspec.Struct, kw_only=True):
    data: PoolRemoveResult


class AttachBody(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    workspace_id: str
    quantity: int
    client_id: int | None = None


class PoolController(Controller):
    path = "/pool"
    tags = ["pool"]

    @post(
        "/add",
        operation_id="addPoolDomains",
        summary="Add 1 to 25 eligible domains to the pool (all or nothing)",
        description=pool_inventory.__doc__,
        status_code=200,
    )
    async def add(self, request: Request[Any, Any, Any], data: PoolDomainsBody) -> dict[str, Any]:
        container, principal = container_of(request), principal_of(request)
        result = await anyio.to_thread.run_sync(
            lambda: pool_inventory.add_domains(container, principal, data.domains)
        )
        return {"data": result}

    @post(
        "/remove",
        operation_id="removePoolDomains",
        summary="Remove exact domains from active pool inventory",
        description=pool_inventory.__doc__,
        status_code=200,
        responses={200: ResponseSpec(PoolRemoveResponse, description="Each domain's outcome")},
    )
    async def remove(
        self, request: Request[Any, Any, Any], data: PoolDomainsBody
    ) -> dict[str, Any]:
        container, principal = container_of(request), principal_of(request)
        result = await anyio.to_thread.run_sync(
            lambda: pool_inventory.remove_domains(container, principal, data.domains)
        )
        return {"data": result}

    @post(
        "/attach",
        operation_id="attachPoolDomains",
        summary="Reserve an exact quantity of pool domains for a workspace (pcl_)",
        description=f"{pool_attach.__doc__}\n{ATTACH_IDEMPOTENCY}\n\n{POOL_EVENTS}",
        status_code=202,
    )
    async def attach(
        self, request: Request[Any, Any, Any], data: AttachBody
    ) -> Response[Any]:
        container, principal = container_of(request), principal_of(request)
        body = msgspec.to_builtins(data)

        def run() -> dict[str, Any]:
            return {"data": pool_attach.attach(container, principal, body)}

        if request.headers.get("idempotency-key"):
            return await idempotent(request, run, status_code=202)
        return Response(await anyio.to_thread.run_sync(run), status_code=202)

    @post(
        "/release",
        operation_id="releasePoolDomains",
        summary="Give assigned pool domains back to the pool (prl_)",
        description=pool_attach.__doc__,
        status_code=202,
    )
    async def release(
        self, request: Request[Any, Any, Any], data: PoolDomainsBody
    ) -> dict[str, Any]:
        container, principal = container_of(request), principal_of(request)
        result = await anyio.to_thread.run_sync(
            lambda: pool_attach.release(container, principal, data.domains)
        )
        return {"data": result}

    @get(
        "/domains",
        operation_id="listPoolDomains",
        summary="List pool domains",
        description=f"Filter `condition`: one of {', '.join(CONDITIONS)}. Newest first.",
    )
    async def list_domains(
        self,
        request: Request[Any, Any, Any],
        condition: str | None = None,
        per_page: int | None = None,
        page_token: str | None = None,
    ) -> dict[str, Any]:
        if condition is not None and condition not in CONDITIONS:
            raise invalid(f"condition must be one of {', '.join(CONDITIONS)}.", "condition")
        now = container_of(request).clock.now()
        where: list[tuple[str, Any]] = [
            ("tenant = ?", principal_of(request).tenant),
            ("condition <> ?", "not_pooled"),
            ("condition <> ?", "removed"),
        ]
        if condition is not None:
            where.append(condition_clause(condition, now))
        return list_page(
            request,
            table="pool_domains",
            where=where,
            filters={"condition": condition},
            per_page=per_page,
            page_token=page_token,
            render=lambda row: render_pool_row(row, now),
        )

    @get(
        "/reservations/{reservation_id:str}",
        operation_id="getPoolReservation",
        summary="One pool reservation (attach)",
    )
    async def get_reservation(
        self, request: Request[Any, Any, Any], reservation_id: str
    ) -> dict[str, Any]:
        container, principal = container_of(request), principal_of(request)
        return {"data": pool_attach.load_reservation(container, principal, reservation_id)}

    @get("/releases/{release_id:str}", operation_id="getPoolRelease", summary="One pool release")
    async def get_release(self, request: Request[Any, Any, Any], release_id: str) -> dict[str, Any]:
        container, principal = container_of(request), principal_of(request)
        return {"data": pool_attach.load_release(container, principal, release_id)}

    @get(
        "/replacements/{replacement_id:str}",
        operation_id="getPoolReplacement",
        summary="One pool replacement of a burned domain",
    )
    async def get_replacement(
        self, request: Request[Any, Any, Any], replacement_id: str
    ) -> dict[str, Any]:
        tenant = principal_of(request).tenant
        return {"data": load_replacement(container_of(request), tenant, replacement_id)}

    @get(
        "/burned_domain_jobs/{job_id:str}",
        operation_id="getBurnedDomainJob",
        summary="One burned-domain job",
    )
    async def get_burned_job(self, request: Request[Any, Any, Any], job_id: str) -> dict[str, Any]:
        tenant = principal_of(request).tenant
        return {"data": load_burned_job(container_of(request), tenant, job_id)}
