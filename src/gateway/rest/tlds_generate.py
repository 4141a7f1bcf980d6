"""`GET /domains/tlds` and `POST /domains/generate` (spec 4.2; decisions.md 3)."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Controller, Request, get, post

from gateway.rest.auth import WRITE_LIMITED, principal_of
from gateway.rest.lists import container_of, memory_page
from gateway.rest.schema_notes import ResponseDoc
from infra.blocking import run_blocking
from services.domains.commands import GenerateDomains
from services.domains.generation import __doc__ as GENERATION_RULES
from services.domains.generation import generate, tld_catalog
from views.domains import GeneratedResponse, TldPage


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
    ) -> TldPage:
        # Paged like every list (decisions.md 3: `per_page`, `page_token`; `data`, `links`,
        # `meta`), although the whole catalog fits on the default page.
        catalog = [(-index, tld) for index, tld in enumerate(tld_catalog())]
        return msgspec.convert(memory_page(request, catalog, per_page, page_token), TldPage)

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
    async def generate(
        self, request: Request[Any, Any, Any], data: GenerateDomains
    ) -> GeneratedResponse:
        container, principal = container_of(request), principal_of(request)
        return GeneratedResponse(
            await run_blocking(lambda: generate(container, principal, data))
        )
