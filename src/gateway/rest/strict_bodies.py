"""Request bodies are decoded strictly before the handler runs.

Litestar converts a handler's `data` with `strict=False`, as it must for query strings, so
`"quantity": "1"` would pass as 1 and `"send_on_weekends": "true"` as a boolean. A partner who
sends the wrong JSON type gets 400 `invalid_request` with `field` set, on every body, as on
`POST /orders`, whose body is decoded the same way in its handler.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request

from gateway.rest.json_bodies import decode_body
from gateway.rest.query_rules import refuse_unknown_query_parameters
from gateway.rest.repeated_keys import refuse_repeated_keys
from gateway.rest.text_rules import refuse_nul_characters

_BODILESS = frozenset({"GET", "HEAD", "DELETE", "OPTIONS"})


def body_type(handler: Any) -> type[msgspec.Struct] | None:
    """The msgspec type of the handler's `data` parameter, if it has one (Litestar keeps the
    parsed signature on the handler)."""
    parameter = handler.parsed_fn_signature.parameters.get("data")
    kind = getattr(parameter, "annotation", None)
    return kind if isinstance(kind, type) and issubclass(kind, msgspec.Struct) else None


async def decode_strictly(request: Request[Any, Any, Any]) -> None:
    if request.method in _BODILESS:
        return
    kind = body_type(request.route_handler)
    if kind is not None:
        await decode_body(request, kind)


async def request_rules(request: Request[Any, Any, Any]) -> None:
    """The `before_request` hook of every partner route. A handler's own hook replaces the
    router's (Litestar keeps only the closest), so each such hook calls this first."""
    await refuse_nul_characters(request)
    await refuse_repeated_keys(request)
    refuse_unknown_query_parameters(request)
    await decode_strictly(request)


class NoBody(msgspec.Struct, forbid_unknown_fields=True):
    """What an operation without input accepts: nothing, or an object without properties."""


async def reject_body_properties(request: Request[Any, Any, Any]) -> None:
    """`before_request` hook of bodiless POSTs: decisions.md 4 makes an unknown JSON property
    `invalid_request` with `field` on every body, so a property sent there is not ignored.
    No body, `{}` and `null` (what `JSON.stringify(null)` sends) mean no input."""
    await request_rules(request)
    body = (await request.body()).strip()
    if body and body != b"null":
        await decode_body(request, NoBody)
