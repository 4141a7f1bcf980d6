"""`GET /domains/tlds` and `POST /domains/generate` (spec 4.2; decisions.md 3)."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
from litestar import Controller, Request, get, post

from gateway.rest.auth import WRITE_LIMITED
from gateway.rest.lists import container_of
from services.generation import __doc__ as GENERATION_RULES
from services.generation import generate, tld_catalog


class GenerateBody(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    keywords: list[str]
    prefixes: list[str] = []
    suffixes: list[str] = []
    tlds: list[str] | None = None
    limit: int | None = None


class TldsGenerateController(Controller):
    path = "/domains"
    tags = ["domains"]

    @get(
        "/tlds",
        operation_id="listTlds",
        summary="The catalog of active sellable TLDs (no prices or availability)",
    )
    async def tlds(self) -> dict[str, Any]:
        return {"data": tld_catalog()}

    @post(
        "/generate",
        operation_id="generateDomains",
        summary="Generate available names from keywords, prefixes and suffixes, grouped by TLD",
        description=(GENERATION_RULES or "")
        + "\nBody: `keywords` (1..10), `prefixes`, `suffixes`, `tlds`, `limit` (1..150, "
        "default 75). Callable by `limited` keys.",
        opt=WRITE_LIMITED,
        status_code=200,
    )
    async def generate(self, request: Request[Any, Any, Any], data: GenerateBody) -> dict[str, Any]:
        container = container_of(request)
        body = msgspec.to_builtins(data)
        return {"data": await anyio.to_thread.run_sync(lambda: generate(container, body))}
