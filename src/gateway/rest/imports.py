"""Domain imports (spec 2.6, 4.1, 4.2; decisions.md 3): synchronous, queued, list, one job."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.params import Parameter

from domain.errors import invalid
from domain.imports import ACTION_REQUIRED, COMPLETED, FAILED, IN_PROGRESS
from gateway.rest.auth import principal_of
from gateway.rest.idempotency import maybe_idempotent
from gateway.rest.lists import container_of, list_page
from gateway.rest.schema_notes import ResponseDoc
from gateway.rest.workspaces import UNKNOWN_WORKSPACE
from services.domains.commands import ImportDomains, SubmitImportJob
from services.domains.imports import __doc__ as IMPORT_RULES
from services.domains.imports import import_now, load_job, submit_job
from views.jobs import ImportJobList, ImportJobOut, ImportJobResponse

JOB_STATUSES = (IN_PROGRESS, COMPLETED, FAILED, ACTION_REQUIRED)


ONE_JOB = ResponseDoc(ImportJobResponse, description="The import job")


# Documentation only: the handlers check filter values themselves, to answer the spec-7
# envelope with `field`; `schema_extra` puts the allowed values in the OpenAPI document.
StatusFilter = Annotated[str | None, Parameter(schema_extra={"enum": list(JOB_STATUSES)})]


class ImportsController(Controller):
    path = "/domains/import"
    tags = ["domain imports"]

    @post(
        operation_id="importDomains",
        summary="Import up to 50 existing domains now (needs a free DNS account)",
        description=IMPORT_RULES,
        status_code=201,
        responses={201: ONE_JOB, **UNKNOWN_WORKSPACE},
    )
    async def import_sync(
        self, request: Request[Any, Any, Any], data: ImportDomains
    ) -> Response[ImportJobResponse]:
        container, principal = container_of(request), principal_of(request)
        return await maybe_idempotent(
            request, lambda: ImportJobResponse(import_now(container, principal, data))
        )

    @post(
        "/jobs",
        operation_id="submitImportJob",
        summary="Queue a bulk import of up to 500 domains",
        description=IMPORT_RULES,
        status_code=201,
        responses={201: ONE_JOB, **UNKNOWN_WORKSPACE},
    )
    async def submit(
        self, request: Request[Any, Any, Any], data: SubmitImportJob
    ) -> Response[ImportJobResponse]:
        container, principal = container_of(request), principal_of(request)
        return await maybe_idempotent(
            request, lambda: ImportJobResponse(submit_job(container, principal, data))
        )

    @get(
        "/jobs",
        operation_id="listImportJobs",
        summary="List import jobs",
        description="Filters: `status`, `domain` (jobs holding this exact name). Newest first.",
        responses={200: ResponseDoc(ImportJobList, description="A page of import jobs")},
    )
    async def list_jobs(
        self,
        request: Request[Any, Any, Any],
        status: StatusFilter = None,
        domain: str | None = None,
        per_page: int | None = None,
        page_token: str | None = None,
    ) -> ImportJobList:
        if status is not None and status not in JOB_STATUSES:
            raise invalid(f"status must be one of {', '.join(JOB_STATUSES)}.", "status")
        name = domain.strip().lower().rstrip(".") if domain else None
        page = list_page(
            request,
            table="import_jobs",
            where=[
                ("tenant = ?", principal_of(request).tenant),
                ("status = ?", status),
                ("id IN (SELECT job_id FROM import_job_domains WHERE name = ?)", name),
            ],
            filters={"status": status, "domain": name},
            per_page=per_page,
            page_token=page_token,
            render=lambda row: msgspec.json.decode(row["doc"], type=ImportJobOut),
        )
        return msgspec.convert(page, ImportJobList)

    @get(
        "/jobs/{job_id:str}",
        operation_id="getImportJob",
        description="An import job: its status and each domain's (queued, awaiting nameservers, "
        "completed or failed, with the reason) and the nameservers to point them at.",
        summary="One import job",
        responses={200: ONE_JOB},
    )
    async def get_job(self, request: Request[Any, Any, Any], job_id: str) -> ImportJobResponse:
        return ImportJobResponse(load_job(container_of(request), principal_of(request), job_id))
