"""`GET /domains/tlds` and `POST /domains/generate` (spec 4.2; decisions.md 3)."""

from __future__ import annotations

from typing import Annotated, Any

import anyio
import msgspec
from litestar import Controller, Request, get, post

from gateway.rest.auth import WRITE_LIMITED, principal_of
from gateway.rest.lists import container_of, memory_page
from gateway.rest.schema_notes import ResponseDoc
from schema.rules import documented
from services.domains.generation import MAX_AFFIXES, MAX_KEYWORDS, MAX_LIMIT, generate, tld_catalog
from services.domains.generation import __doc__ as GENERATION_RULES
from views.pages import Links, Meta

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
        description="The TLDs domains can be bought or generated under, a page at a time; prices "
        "and availability come from `POST /domains/availability`.",
        summary="The catalog of active sellable TLDs (no prices or availability)",
        responses={200: ResponseDoc(TldPage, description="A page of the TLD catalog")},
    )
    async def tlds(
        self,
        request: Request[Any, Any, Any],
        per_page: int | None = None,
        page_token: str | None = None,
    ) -> dict[str, Any]:
        # Paged like every list (decisions.md 3: `per_page`, `page_token`; `data`, `links`,
        # `meta`), although the whole catalog fits on the default page.
        catalog = [(-index, tld) for index, tld in enumerate(tld_catalog())]
        return memory_page(request, catalog, per_page, page_token)

    @post(
        "/generate",
        operation_id="generateDomains",
        summary="Generate available names from keywords, prefixes and suffixes, grouped by TLD",
        description=(GENERATION_RULES or "")
        + "\nBody: `keywords` (1..10), `prefixes`, `suffixes`, `tlds`, `limit` (1..150, "
        "default 75). Callable by `limited` keys.",
        opt=WRITE_LIMITED,
        status_code=200,
        responses={200: ResponseDoc(GeneratedResponse, description="The names found, by TLD")},
    )
    async def generate(self, request: Request[Any, Any, Any], data: GenerateBody) -> dict[str, Any]:
        container = container_of(request)
        body = msgspec.to_builtins(data)
        tenant = principal_of(request).tenant
        return {"data": await anyio.to_thread.run_sync(lambda: generate(container, tenant, body))}
