"""`GET /domains/tlds` and `POST /domains/generate` (spec 4.2; decisions.md 3)."""

from __future__ import annotations

from typing import Annotated, Any

import anyio
import msgspec
from litestar import Controller, Request, get, post
from litestar.openapi.datastructures import ResponseSpec

from domain.errors import DomainError
from gateway.rest.auth import WRITE_LIMITED, principal_of
from gateway.rest.bundles import Links, Meta
from gateway.rest.lists import container_of, origin_of
from gateway.rest.pagination import check_per_page, page_response
from gateway.rest.schema_notes import documented
from services.generation import MAX_AFFIXES, MAX_KEYWORDS, MAX_LIMIT, generate, tld_catalog
from services.generation import __doc__ as GENERATION_RULES

# Documentation only (`extra_json_schema`): the service checks these bounds itself, to answer
# the spec-7 envelope with its own message and `field`; msgspec does not enforce them.
# Letters, digits and hyphens, either case (the service lowers them).
KEYWORD = {"type": "string", "pattern": "^[A-Za-z0-9-]{1,40}$"}


class GenerateBody(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    keywords: Annotated[list[str], documented(min_items=1, max_items=MAX_KEYWORDS, items=KEYWORD)]
    # Both omitted: the service's own lists (`DEFAULT_PREFIXES`, `DEFAULT_SUFFIXES`).
    prefixes: Annotated[list[str] | None, documented(max_items=MAX_AFFIXES, items=KEYWORD)] = None
    suffixes: Annotated[list[str] | None, documented(max_items=MAX_AFFIXES, items=KEYWORD)] = None
    tlds: Annotated[list[str] | None, documented(min_items=1)] = None  # omitted: `com` only
    limit: Annotated[int | None, documented(minimum=1, maximum=MAX_LIMIT)] = None  # default 75


class Tld(msgspec.Struct):
    tld: str  # without the dot: `com`
    name: str  # with the dot: `.com`


class TldPage(msgspec.Struct):
    data: list[Tld]
    links: Links
    meta: Meta


class TldGroup(msgspec.Struct):
    tld: str
    domains: list[str]  # available names under this TLD


class GeneratedOut(msgspec.Struct):
    """Names grouped by the TLDs asked for, in that order."""

    domains: list[TldGroup]
    returned: int  # names found, across groups
    candidates_examined: int
    partial: bool  # fewer than `limit` found before the time budget ran out


class GeneratedResponse(msgspec.Struct):
    data: GeneratedOut


class TldsGenerateController(Controller):
    path = "/domains"
    tags = ["domains"]

    @get(
        "/tlds",
        operation_id="listTlds",
        summary="The catalog of active sellable TLDs (no prices or availability)",
        responses={200: ResponseSpec(TldPage, description="A page of the TLD catalog")},
    )
    async def tlds(
        self,
        request: Request[Any, Any, Any],
        per_page: int | None = None,
        page_token: str | None = None,
    ) -> dict[str, Any]:
        # Paged like every list (decisions.md 3: `per_page`, `page_token`; `data`, `links`,
        # `meta`), although the whole catalog fits on the default page.
        return _catalog_page(request, tld_catalog(), per_page, page_token)

    @post(
        "/generate",
        operation_id="generateDomains",
        summary="Generate available names from keywords, prefixes and suffixes, grouped by TLD",
        description=(GENERATION_RULES or "")
        + "\nBody: `keywords` (1..10), `prefixes`, `suffixes`, `tlds`, `limit` (1..150, "
        "default 75). Callable by `limited` keys.",
        opt=WRITE_LIMITED,
        status_code=200,
        responses={200: ResponseSpec(GeneratedResponse, description="The names found, by TLD")},
    )
    async def generate(self, request: Request[Any, Any, Any], data: GenerateBody) -> dict[str, Any]:
        container = container_of(request)
        body = msgspec.to_builtins(data)
        tenant = principal_of(request).tenant
        return {"data": await anyio.to_thread.run_sync(lambda: generate(container, tenant, body))}


def _catalog_page(
    request: Request[Any, Any, Any],
    catalog: list[dict[str, Any]],
    per_page: int | None,
    page_token: str | None,
) -> dict[str, Any]:
    """An offset page over a fixed in-memory list, with the same signed tokens as the tables."""
    size = check_per_page(per_page)
    tokens = container_of(request).extras["page_tokens"]
    path, tenant = request.url.path, principal_of(request).tenant
    start = tokens.decode(page_token, path, {}, tenant) if page_token else 0
    if not isinstance(start, int) or start < 0:
        raise DomainError("invalid_request", "page_token is not valid for this list.", field="page_token")
    end = start + size
    next_token = tokens.encode(end, path, {}, tenant) if end < len(catalog) else None
    return page_response(
        items=catalog[start:end], per_page=size, path=path, filters={}, next_token=next_token,
        origin=origin_of(request),
    )
