"""The pre-warmed pool (spec 3, 4.1, 4.2; decisions.md 3): add, remove, attach, release, and
the pool's domains and operations."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import anyio
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
from projections.pool import condition_clause, render_pool_row
from schema.rules import NON_EMPTY_ITEM, documented
from services.fulfillment.burned_domains import load_burned_job
from services.pool import attach as pool_attach
from services.pool import inventory as pool_inventory
from services.pool.attach import MAX_QUANTITY
from services.pool.inventory import MAX_DOMAINS
from services.pool.replacements import load_replacement
from views.pages import Links, Meta
from webhooks.pool_events import __doc__ as POOL_EVENTS

ATTACH_IDEMPOTENCY = (
    "An optional `Idempotency-Key` header makes a retried attach safe: the same key and body "
    "answer the first reservation again (24 h), as on `POST /orders`."
)


# Documentation only (`extra_json_schema`): the service checks these bounds itself, to answer
# the spec-7 envelope with its own message and `field`; msgspec does not enforce them.
class PoolDomainsBody(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    domains: Annotated[
        list[str],
        documented(min_items=1, max_items=MAX_DOMAINS, unique_items=True, items=NON_EMPTY_ITEM),
    ]


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


Condition = Literal["available", "warming", "idle_quarantined", "assigned", "reserved", "releasing"]


class PoolDomainOut(msgspec.Struct, kw_only=True):
    """A pool domain; `available_at` is when warming or quarantine ends (null once available)."""

    id: str | None  # the domain's dom_ id
    domain: str
    condition: Condition
    available_at: str | None
    order_id: str | None
    inbox_count: Count
    reservation_id: str | None
    workspace_id: str | None
    client_id: int | None
    burned: bool
    added_at: str | None
    updated_at: str | None


class PoolDomainPage(msgspec.Struct):
    data: list[PoolDomainOut]
    links: Links
    meta: Meta


class PoolAddOutcome(PoolDomainOut, kw_only=True):
    outcome: Literal["added", "already_pooled"]


class PoolAddResult(msgspec.Struct, kw_only=True):
    added: Count
    already_pooled: Count
    domains: list[PoolAddOutcome]


class PoolAddResponse(msgspec.Struct):
    data: PoolAddResult


class JobDomain(msgspec.Struct):
    id: str  # dom_
    domain: str


class ReservationOut(msgspec.Struct, kw_only=True):
    """A pool reservation (`pcl_`), the answer of an attach."""

    id: str
    status: Literal["in_progress", "completed", "failed"]
    workspace_id: str
    client_id: int | None
    quantity: int
    domains: list[JobDomain]
    reason: str | None
    created_at: str
    completed_at: str | None


class ReservationResponse(msgspec.Struct):
    data: ReservationOut


class ReleaseOut(msgspec.Struct, kw_only=True):
    """A pool release (`prl_`)."""

    id: str
    status: Literal["in_progress", "completed"]
    domains: list[JobDomain]
    created_at: str
    completed_at: str | None


class ReleaseResponse(msgspec.Struct):
    data: ReleaseOut


class ReplacementOut(msgspec.Struct, kw_only=True):
    """A replacement (`prp_`) of a burned domain by an available pool domain."""

    id: str
    status: Literal["completed", "failed"]
    job_id: str | None  # the burned-domain job (`brj_`) that asked for it
    workspace_id: str | None
    client_id: int | None
    burned_domain: JobDomain
    replacement_domain: JobDomain | None  # null when the pool had none (`reason`)
    reason: str | None
    created_at: str
    completed_at: str | None


class ReplacementResponse(msgspec.Struct):
    data: ReplacementOut


class BurnedJobOut(msgspec.Struct, kw_only=True):
    """A burned-domain job (`brj_`)."""

    id: str
    status: Literal["in_progress", "completed"]
    domain: JobDomain
    operator: str | None
    reason: str
    pool_condition: str | None  # the domain's pool condition once the job completed
    replacement_id: str | None
    created_at: str
    completed_at: str | None


class BurnedJobResponse(msgspec.Struct):
    data: BurnedJobOut


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


class AttachBody(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    workspace_id: str
    quantity: Annotated[int, documented(minimum=1, maximum=MAX_QUANTITY)]
    client_id: int | None = None  # kind m workspaces only


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
        responses={200: ResponseDoc(PoolRemoveResponse, description="Each domain's outcome")},
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
        responses={202: ONE_RESERVATION, **UNKNOWN_WORKSPACE},
    )
    async def attach(self, request: Request[Any, Any, Any], data: AttachBody) -> Response[Any]:
        container, principal = container_of(request), principal_of(request)
        body = msgspec.to_builtins(data)

        def run() -> dict[str, Any]:
            return {"data": pool_attach.attach(container, principal, body)}

        return await maybe_idempotent(request, run, status_code=202)

    @post(
        "/release",
        operation_id="releasePoolDomains",
        summary="Give assigned pool domains back to the pool (prl_)",
        description=pool_attach.__doc__,
        status_code=202,
        responses={202: ONE_RELEASE},
    )
    async def release(
        self, request: Request[Any, Any, Any], data: PoolDomainsBody
    ) -> Response[Any]:
        container, principal = container_of(request), principal_of(request)
        return await maybe_idempotent(
            request,
            lambda: {"data": pool_attach.release(container, principal, data.domains)},
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
        description="A pool reservation (an attach): the workspace, the pool domains reserved for"
        " it and whether the attach has finished.",
        summary="One pool reservation (attach)",
        responses={200: ONE_RESERVATION},
    )
    async def get_reservation(
        self, request: Request[Any, Any, Any], reservation_id: str
    ) -> dict[str, Any]:
        container, principal = container_of(request), principal_of(request)
        found = await anyio.to_thread.run_sync(
            lambda: pool_attach.load_reservation(container, principal, reservation_id)
        )
        return {"data": found}

    @get(
        "/releases/{release_id:str}",
        operation_id="getPoolRelease",
        description="A pool release: the domains given back to the pool and whether the release "
        "has finished.",
        summary="One pool release",
        responses={200: ONE_RELEASE},
    )
    async def get_release(self, request: Request[Any, Any, Any], release_id: str) -> dict[str, Any]:
        container, principal = container_of(request), principal_of(request)
        found = await anyio.to_thread.run_sync(
            lambda: pool_attach.load_release(container, principal, release_id)
        )
        return {"data": found}

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
    ) -> dict[str, Any]:
        tenant = principal_of(request).tenant
        return {"data": load_replacement(container_of(request), tenant, replacement_id)}

    @get(
        "/burned_domain_jobs/{job_id:str}",
        operation_id="getBurnedDomainJob",
        description="A burned-domain job: the pool domains reported as burned and what became of "
        "each.",
        summary="One burned-domain job",
        responses={200: ResponseDoc(BurnedJobResponse, description="The burned-domain job")},
    )
    async def get_burned_job(self, request: Request[Any, Any, Any], job_id: str) -> dict[str, Any]:
        tenant = principal_of(request).tenant
        return {"data": load_burned_job(container_of(request), tenant, job_id)}
