"""Provider workspaces (spec 2.3, 4.1, 4.2; decisions.md 3): create, list, get, replace credentials.

Credentials go in and are never sent back: the response shapes (views/workspaces.py) have no
place for them.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get, patch, post
from litestar.params import Parameter

from domain.errors import invalid
from domain.workspaces import PROVIDERS
from gateway.rest.auth import principal_of
from gateway.rest.idempotency import idempotency_key_first, idempotent, maybe_idempotent
from gateway.rest.lists import container_of, list_page
from gateway.rest.schema_notes import ResponseDoc
from services.accounts.commands import CreateWorkspace, UpdateWorkspace
from services.accounts.workspaces import create_workspace, get_workspace, update_workspace
from views.workspaces import WorkspaceOut, WorkspacePage, WorkspaceResponse

# Documentation only: the handlers check filter values themselves, to answer the spec-7
# envelope with `field`; `schema_extra` puts the allowed values in the OpenAPI document.
ProviderFilter = Annotated[str | None, Parameter(schema_extra={"enum": list(PROVIDERS)})]


PROMOTION_NOTE = (
    "A live key naming its own organization's sandbox workspace gets 409 "
    "`workspace_promotion_required` instead: create the workspace with a live key."
)
# The shared 404 goes only to paths with an id parameter; this one names an id in its body.
UNKNOWN_WORKSPACE: dict[int, ResponseDoc] = {
    404: ResponseDoc(
        None, description=f"not_found: no such workspace (`field` names it). {PROMOTION_NOTE}"
    )
}

# The sequencing provider checks the credentials (adapters/sequencers.py); both codes are beyond
# the shared list, so each operation that calls the provider names them.
PROVIDER_ERRORS: dict[int, ResponseDoc] = {
    422: ResponseDoc(
        None, description="provider_credentials_invalid: the provider refused the credentials"
    ),
    503: ResponseDoc(
        None, description="provider_unavailable: the provider did not answer; retry later"
    ),
}


class WorkspacesController(Controller):
    path = "/workspaces"
    tags = ["workspaces"]

    @post(
        operation_id="createWorkspace",
        summary="Register a provider workspace (Idempotency-Key required)",
        before_request=idempotency_key_first,
        description=(
            "Validates the credentials with the sequencing provider, stores them encrypted and "
            "never returns them. Kinds: `u` (API key; super-admin keys rejected), `i` (API key), "
            "`m` (API key and label; login email and password optional but together), `w` (API "
            "key, remote `workspace_id`, login email and password). Optional `customer` tracking "
            "(`cus_`; the same `external_id` is the same customer), not accepted for kind `m`."
        ),
        responses={
            201: ResponseDoc(WorkspaceResponse, description="The workspace"),
            **PROVIDER_ERRORS,
        },
    )
    async def create(
        self, request: Request[Any, Any, Any], data: CreateWorkspace
    ) -> Response[WorkspaceResponse]:
        principal = principal_of(request)
        container = container_of(request)
        return await idempotent(
            request,
            lambda: WorkspaceResponse(create_workspace(container, principal, data)),
            status_code=201,
        )

    @get(
        operation_id="listWorkspaces",
        summary="List provider workspaces",
        description="Newest first. Filters: `provider` (`u`, `i`, `m`, `w`), `customer_id`.",
    )
    async def list_workspaces(
        self,
        request: Request[Any, Any, Any],
        provider: ProviderFilter = None,
        customer_id: str | None = None,
        per_page: int | None = None,
        page_token: str | None = None,
    ) -> WorkspacePage:
        # Creation accepts the spec's kind letters in either case (`U` or `u`); so does the filter.
        provider = provider.strip().lower() if provider is not None else None
        if provider is not None and provider not in PROVIDERS:
            raise invalid("provider must be one of u, i, m, w.", "provider")
        page = list_page(
            request,
            table="catalog_workspaces",
            where=[
                ("tenant = ?", principal_of(request).tenant),
                ("provider = ?", provider),
                ("customer_id = ?", customer_id),
            ],
            filters={"provider": provider, "customer_id": customer_id},
            per_page=per_page,
            page_token=page_token,
            render=lambda row: msgspec.json.decode(row["doc"], type=WorkspaceOut),
        )
        return msgspec.convert(page, WorkspacePage)

    @get(
        "/{workspace_id:str}",
        operation_id="getWorkspace",
        description="A provider workspace (`wrk_`) of this key's environment: its provider, "
        "customer and whether a login pair is stored. Credentials are never answered.",
        summary="One provider workspace (never with credentials)",
    )
    async def get_workspace(
        self, request: Request[Any, Any, Any], workspace_id: str
    ) -> WorkspaceResponse:
        return WorkspaceResponse(
            get_workspace(container_of(request), principal_of(request), workspace_id)
        )

    @patch(
        "/{workspace_id:str}",
        operation_id="updateWorkspace",
        summary="Rename a workspace or replace its credentials (re-validated)",
        description=(
            "`credentials` replaces the saved set as a whole and follows the same rules as at "
            "creation for the workspace's kind; the kind itself cannot change (a `provider` "
            "other than the workspace's is 409 `provider_mismatch`). A new key "
            "rotates access to the same provider workspace; kind w credentials naming another "
            "remote `workspace_id` are 409 `workspace_credentials_conflict` (the orders routed "
            "here would move): create a new workspace for it."
        ),
        responses={
            200: ResponseDoc(WorkspaceResponse, description="The workspace"),
            409: ResponseDoc(
                None,
                description="workspace_credentials_conflict: the credentials are for another "
                "remote workspace; provider_mismatch: `provider` is not the workspace's kind",
            ),
            **PROVIDER_ERRORS,
        },
    )
    async def update(
        self, request: Request[Any, Any, Any], workspace_id: str, data: UpdateWorkspace
    ) -> Response[WorkspaceResponse]:
        principal = principal_of(request)
        container = container_of(request)
        return await maybe_idempotent(
            request,
            lambda: WorkspaceResponse(update_workspace(container, principal, workspace_id, data)),
            status_code=200,
        )
