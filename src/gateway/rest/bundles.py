"""Bundles (spec 2.2, 4.1; decisions.md 3): save, list, get, edit, archive order templates."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get, patch, post
from litestar.params import Parameter

from domain.bundles import STATUSES
from domain.errors import invalid
from gateway.rest.auth import principal_of
from gateway.rest.idempotency import maybe_idempotent
from gateway.rest.lists import container_of, list_page
from gateway.rest.schema_notes import ResponseDoc
from gateway.rest.strict_bodies import reject_body_properties
from services.catalog.bundles import archive_bundle, create_bundle, get_bundle, update_bundle
from services.catalog.commands import CreateBundle, UpdateBundle
from services.catalog.sizing import __doc__ as SIZING_RULE
from views.bundles import BundleOut, BundlePage, BundleResponse, list_item

# Documentation only: the handlers check filter values themselves, to answer the spec-7
# envelope with `field`; `schema_extra` puts the allowed values in the OpenAPI document.
StatusFilter = Annotated[str | None, Parameter(schema_extra={"enum": list(STATUSES)})]


class BundlesController(Controller):
    path = "/bundles"
    tags = ["bundles"]

    @post(
        operation_id="createBundle",
        summary="Save a bundle (an order template sized by monthly sending volume)",
        description=(SIZING_RULE or "")
        + "\nAn `Idempotency-Key` header is optional here; when sent, a retry answers the first "
        "response again.",
        responses={201: ResponseDoc(BundleResponse, description="The bundle")},
    )
    async def create(
        self, request: Request[Any, Any, Any], data: CreateBundle
    ) -> Response[BundleResponse]:
        principal = principal_of(request)
        container = container_of(request)
        return await maybe_idempotent(
            request, lambda: BundleResponse(create_bundle(container, principal, data))
        )

    @get(
        operation_id="listBundles",
        summary="List bundles",
        description=(
            "Newest first; filter `status` (`active` or `archived`). Each row carries the "
            "single response's `suite_a_licenses` under the name `suite_a_inboxes_per_domain`."
        ),
    )
    async def list_bundles(
        self,
        request: Request[Any, Any, Any],
        status: StatusFilter = None,
        per_page: int | None = None,
        page_token: str | None = None,
    ) -> BundlePage:
        if status is not None and status not in STATUSES:
            raise invalid("status must be active or archived.", "status")
        page = list_page(
            request,
            table="catalog_bundles",
            where=[("tenant = ?", principal_of(request).tenant), ("status = ?", status)],
            filters={"status": status},
            per_page=per_page,
            page_token=page_token,
            render=lambda row: list_item(msgspec.json.decode(row["doc"], type=BundleOut)),
        )
        return msgspec.convert(page, BundlePage)

    @get(
        "/{bundle_id:str}",
        operation_id="getBundle",
        summary="One bundle",
        description="A bundle (`bun_`): the sending volume it is sized for and the suite split "
        "and licences it gives an order.",
    )
    async def get_bundle(self, request: Request[Any, Any, Any], bundle_id: str) -> BundleResponse:
        return BundleResponse(get_bundle(container_of(request), principal_of(request), bundle_id))

    @patch(
        "/{bundle_id:str}",
        operation_id="updateBundle",
        summary="Edit a bundle; its sizing is recomputed",
        description="Archived bundles cannot be edited (409 `bundle_archived`).",
    )
    async def edit(
        self, request: Request[Any, Any, Any], bundle_id: str, data: UpdateBundle
    ) -> Response[BundleResponse]:
        principal = principal_of(request)
        container = container_of(request)
        return await maybe_idempotent(
            request,
            lambda: BundleResponse(update_bundle(container, principal, bundle_id, data)),
            status_code=200,
        )

    @post(
        "/{bundle_id:str}/archive",
        operation_id="archiveBundle",
        description="Archives a bundle: orders can no longer name it, orders placed with it are "
        "unchanged. Archiving an archived bundle answers it unchanged.",
        before_request=reject_body_properties,
        summary="Archive a bundle (repeating is safe)",
        status_code=200,
    )
    async def archive(
        self, request: Request[Any, Any, Any], bundle_id: str
    ) -> Response[BundleResponse]:
        principal = principal_of(request)
        container = container_of(request)
        return await maybe_idempotent(
            request,
            lambda: BundleResponse(archive_bundle(container, principal, bundle_id)),
            status_code=200,
        )
