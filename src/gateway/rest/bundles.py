"""Bundles (spec 2.2, 4.1; decisions.md 3): save, list, get, edit, archive order templates."""

from __future__ import annotations

import json
from typing import Annotated, Any

import anyio
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
from schema.rules import TEXT, documented
from schema.vocabulary import BundleStatus
from services.catalog.bundles import (
    archive_bundle,
    bundle_view,
    create_bundle,
    edit_bundle,
    list_view,
    load_bundle,
)
from services.catalog.sizing import MAX_MONTHLY_VOLUME, MAX_SUITE_A_INBOXES_PER_DOMAIN
from services.catalog.sizing import __doc__ as SIZING_RULE
from views.pages import Links, Meta


def _range(least: int, most: int) -> msgspec.Meta:
    return documented(minimum=least, maximum=most)


# Documentation only (`extra_json_schema`): services/catalog/sizing.py checks these bounds itself, to
# answer the spec-7 envelope with its own message and `field`; msgspec does not enforce them.
Volume = Annotated[int, _range(1, MAX_MONTHLY_VOLUME)]
Percent = Annotated[int | None, _range(0, 100)]
Licenses = Annotated[int | None, _range(1, MAX_SUITE_A_INBOXES_PER_DOMAIN)]
Edit = int | None | msgspec.UnsetType  # an edited integer: unset when not sent
BundleName = Annotated[str, documented(min_length=1, max_length=200, pattern=TEXT)]


class CreateBundleBody(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    name: BundleName
    monthly_sending_volume: Volume
    send_on_weekends: bool
    suite_a_percent: Percent = None
    suite_b_percent: Percent = None
    suite_a_licenses: Licenses = None


class EditBundleBody(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Only the properties sent change; a null percent or `suite_a_licenses` returns to the
    sizing rule's value."""

    # These three may be left out, not set to null (400 with the property named in `field`).
    name: BundleName | msgspec.UnsetType = msgspec.UNSET
    monthly_sending_volume: Annotated[int | msgspec.UnsetType, _range(1, MAX_MONTHLY_VOLUME)] = (
        msgspec.UNSET
    )
    send_on_weekends: bool | msgspec.UnsetType = msgspec.UNSET
    suite_a_percent: Annotated[Edit, _range(0, 100)] = msgspec.UNSET
    suite_b_percent: Annotated[Edit, _range(0, 100)] = msgspec.UNSET
    suite_a_licenses: Annotated[Edit, _range(1, MAX_SUITE_A_INBOXES_PER_DOMAIN)] = msgspec.UNSET


class Split(msgspec.Struct):
    suite_a_percent: int
    suite_b_percent: int


class SuiteCounts(msgspec.Struct):
    suite_a: int
    suite_b: int
    total: int


class _BundleCommon(msgspec.Struct, kw_only=True):
    id: str
    name: str
    monthly_sending_volume: int
    suite_a_percent: int | None
    suite_b_percent: int | None
    send_on_weekends: bool
    suite_b_inboxes_per_domain: int
    status: BundleStatus
    effective: Split
    inboxes: SuiteCounts
    required_domains: SuiteCounts
    created_at: str
    updated_at: str


class BundleOut(_BundleCommon, kw_only=True):
    suite_a_licenses: int


class BundleListItem(_BundleCommon, kw_only=True):
    suite_a_inboxes_per_domain: int


class BundleResponse(msgspec.Struct):
    data: BundleOut


class BundlePage(msgspec.Struct):
    data: list[BundleListItem]
    links: Links
    meta: Meta


def _single(view: dict[str, Any]) -> BundleResponse:
    return msgspec.convert({"data": view}, BundleResponse)


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
        self, request: Request[Any, Any, Any], data: CreateBundleBody
    ) -> Response[Any]:
        principal = principal_of(request)
        container = container_of(request)
        terms = msgspec.structs.asdict(data)
        return await maybe_idempotent(
            request,
            lambda: {
                "data": create_bundle(container, principal.org_id, principal.environment, terms)
            },
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
            render=lambda row: list_view(json.loads(row["doc"])),
        )
        return msgspec.convert(page, BundlePage)

    @get(
        "/{bundle_id:str}",
        operation_id="getBundle",
        summary="One bundle",
        description="A bundle (`bdl_`): the sending volume it is sized for and the suite split "
        "and licences it gives an order.",
    )
    async def get_bundle(self, request: Request[Any, Any, Any], bundle_id: str) -> BundleResponse:
        principal = principal_of(request)
        bundle = load_bundle(
            container_of(request), principal.org_id, principal.environment, bundle_id
        )
        return _single(bundle_view(bundle))

    @patch(
        "/{bundle_id:str}",
        operation_id="updateBundle",
        summary="Edit a bundle; its sizing is recomputed",
        description="Archived bundles cannot be edited (409 `bundle_archived`).",
    )
    async def edit(
        self, request: Request[Any, Any, Any], bundle_id: str, data: EditBundleBody
    ) -> BundleResponse:
        principal = principal_of(request)
        container = container_of(request)
        changes = {k: v for k, v in msgspec.structs.asdict(data).items() if v is not msgspec.UNSET}
        view = await anyio.to_thread.run_sync(
            lambda: edit_bundle(
                container, principal.org_id, principal.environment, bundle_id, changes
            )
        )
        return _single(view)

    @post(
        "/{bundle_id:str}/archive",
        operation_id="archiveBundle",
        description="Archives a bundle: orders can no longer name it, orders placed with it are "
        "unchanged. Archiving an archived bundle answers it unchanged.",
        before_request=reject_body_properties,
        summary="Archive a bundle (repeating is safe)",
        status_code=200,
    )
    async def archive(self, request: Request[Any, Any, Any], bundle_id: str) -> BundleResponse:
        principal = principal_of(request)
        container = container_of(request)
        view = await anyio.to_thread.run_sync(
            lambda: archive_bundle(container, principal.org_id, principal.environment, bundle_id)
        )
        return _single(view)
