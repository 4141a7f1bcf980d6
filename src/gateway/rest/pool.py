"""The pre-warmed pool (spec 3, 4.1, 4.2; decisions.md 3): add, remove, attach, release, and
the pool's domains and operations.

Each POST decodes its body straight into its command (`services/pool/commands.py`: e.g.
`AttachPool` for `POST /pool/attach`, use case `services/pool/attach.attach`, events
`domain/pool_reservations.py`) and answers a view of `views/pool.py`; `GET /pool/domains` reads
the `projections/pool.py` read model."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.params import Parameter

from domain.errors import invalid
from domain.pool_domains import CONDITIONS
from gateway.rest.auth import principal_of
from gateway.rest.idempotency import maybe_idempotent
from gateway.rest.lists import container_of, list_page
from gateway.rest.schema_notes import ResponseDoc
from gateway.rest.workspaces import PROMOTION_NOTE
from infra.blocking import run_blocking
from projections.pool import condition_clause, render_pool_row
from services.fulfillment.burned_domains import load_burned_job
from services.pool import attach as pool_attach
from services.pool import inventory as pool_inventory
from services.pool.commands import AddPoolDomains, AttachPool, ReleasePool, RemovePoolDomains
from services.pool.replacements import load_replacement
from views.pool import (
    BurnedJobResponse,
    PoolAddResponse,
    PoolDomainPage,
    PoolRemoveResponse,
    ReleaseResponse,
    ReplacementResponse,
    ReservationResponse,
)
from webhooks.pool_events import __doc__ as POOL_EVENTS

ATTACH_IDEMPOTENCY = (
    "An optional `Idempotency-Key` header makes a retried attach safe: the same key and body "
    "answer the first reservation again (24 h), as on `POST /orders`."
)


# The shared 404 goes only to paths with an id parameter; this one names an id in its body.
UNKNOWN_WORKSPACE: dict[int, ResponseDoc] = {
    404: ResponseDoc(
        None,
        description="not_found (no such workspace) or sequencer_client_not_found (no such "
        f"`client_id`); `field` names the input. {PROMOTION_NOTE}",
    )
}


ONE_RESERVATION = ResponseDoc(ReservationResponse, description="The reservation")
ONE_RELEASE = ResponseDoc(ReleaseResponse, description="The release")


# Documentation only: the handlers check filter values themselves, to answer the spec-7
# envelope with `field`; `schema_extra` puts the allowed values in the OpenAPI document.
ConditionFilter = Annotated[str | None, Parameter(schema_extra={"enum": list(CONDITIONS)})]


class PoolController(Controller):
    path = "/pool"
    tags = ["pool"]

    @post(
        "/add",
        operation_id="addPoolDomains",
        summary="Add 1 to 25 eligible domains to the pool (all or nothing)",
        description=pool_inventory.__doc__,
        status_code=200,
        responses={200: ResponseDoc(PoolAddResponse, description="Each domain with its outcome")},
    )
    async def add(
        self, request: Request[Any, Any, Any], data: AddPoolDomains
    ) -> Response[PoolAddResponse]:
        container, principal = container_of(request), principal_of(request)
        return await maybe_idempotent(
            request,
            lambda: PoolAddResponse(pool_inventory.add_domains(container, principal, data)),
            status_code=200,
        )

    @post(
        "/remove",
        operation_id="removePoolDomains",
        summary="Remove exact domains from active pool inventory",
        description=pool_inventory.__doc__,
        status_code=200,
        responses={200: ResponseDoc(PoolRemoveResponse, description="Each domain's outcome")},
    )
    async def remove(
        self, request: Request[Any, Any, Any], data: RemovePoolDomains
    ) -> Response[PoolRemoveResponse]:
        container, principal = container_of(request), principal_of(request)
        return await maybe_idempotent(
            request,
            lambda: PoolRemoveResponse(
                data=pool_inventory.remove_domains(container, principal, data)
            ),
            status_code=200,
        )

    @post(
        "/attach",
        operation_id="attachPoolDomains",
        summary="Reserve an exact quantity of pool domains for a workspace (pcl_)",
        description=f"{pool_attach.__doc__}\n{ATTACH_IDEMPOTENCY}\n\n{POOL_EVENTS}",
        status_code=202,
        responses={202: ONE_RESERVATION, **UNKNOWN_WORKSPACE},
    )
    async def attach(
        self, request: Request[Any, Any, Any], data: AttachPool
    ) -> Response[ReservationResponse]:
        container, principal = container_of(request), principal_of(request)
        return await maybe_idempotent(
            request,
            lambda: ReservationResponse(pool_attach.attach(container, principal, data)),
            status_code=202,
        )

    @post(
        "/release",
        operation_id="releasePoolDomains",
        summary="Give assigned pool domains back to the pool (prl_)",
        description=pool_attach.__doc__,
        status_code=202,
        responses={202: ONE_RELEASE},
    )
    async def release(
        self, request: Request[Any, Any, Any], data: ReleasePool
    ) -> Response[ReleaseResponse]:
        container, principal = container_of(request), principal_of(request)
        return await maybe_idempotent(
            request,
            lambda: ReleaseResponse(pool_attach.release(container, principal, data)),
            status_code=202,
        )

    @get(
        "/domains",
        operation_id="listPoolDomains",
        summary="List pool domains",
        description=f"Filter `condition`: one of {', '.join(CONDITIONS)}. Newest first.",
        responses={200: ResponseDoc(PoolDomainPage, description="A page of pool domains")},
    )
    async def list_domains(
        self,
        request: Request[Any, Any, Any],
        condition: ConditionFilter = None,
        per_page: int | None = None,
        page_token: str | None = None,
    ) -> PoolDomainPage:
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
        page = list_page(
            request,
            table="pool_domains",
            where=where,
            filters={"condition": condition},
            per_page=per_page,
            page_token=page_token,
            render=lambda row: render_pool_row(row, now),
        )
        return msgspec.convert(page, PoolDomainPage)

    @get(
        "/reservations/{reservation_id:str}",
        operation_id="getPoolReservation",
        description="A pool reservation (an attach): the workspace, the pool domains reserved for"
        " it and whether the attach has finished.",
        summary="One pool reservation (attach)",
        responses={200: ONE_RESERVATION},
    )
    async def get_reservation(
        self, request: Request[Any, Any, Any], reservation_id: str
    ) -> ReservationResponse:
        container, principal = container_of(request), principal_of(request)
        found = await run_blocking(
            lambda: pool_attach.load_reservation(container, principal, reservation_id)
        )
        return ReservationResponse(found)

    @get(
        "/releases/{release_id:str}",
        operation_id="getPoolRelease",
        description="A pool release: the domains given back to the pool and whether the release "
        "has finished.",
        summary="One pool release",
        responses={200: ONE_RELEASE},
    )
    async def get_release(
        self, request: Request[Any, Any, Any], release_id: str
    ) -> ReleaseResponse:
        container, principal = container_of(request), principal_of(request)
        found = await run_blocking(
            lambda: pool_attach.load_release(container, principal, release_id)
        )
        return ReleaseResponse(found)

    @get(
        "/replacements/{replacement_id:str}",
        operation_id="getPoolReplacement",
        description="A replacement of a burned pool domain: the domain taken out, the one put in "
        "its place, and whether it succeeded.",
        summary="One pool replacement of a burned domain",
        responses={200: ResponseDoc(ReplacementResponse, description="The replacement")},
    )
    async def get_replacement(
        self, request: Request[Any, Any, Any], replacement_id: str
    ) -> ReplacementResponse:
        tenant = principal_of(request).tenant
        return ReplacementResponse(load_replacement(container_of(request), tenant, replacement_id))

    @get(
        "/burned_domain_jobs/{job_id:str}",
        operation_id="getBurnedDomainJob",
        description="A burned-domain job: the pool domains reported as burned and what became of "
        "each.",
        summary="One burned-domain job",
        responses={200: ResponseDoc(BurnedJobResponse, description="The burned-domain job")},
    )
    async def get_burned_job(
        self, request: Request[Any, Any, Any], job_id: str
    ) -> BurnedJobResponse:
        tenant = principal_of(request).tenant
        return BurnedJobResponse(load_burned_job(container_of(request), tenant, job_id))
