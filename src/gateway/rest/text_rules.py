"""No NUL character in any partner input: PostgreSQL text cannot hold one.

Found by the fuzzer: a NUL in a domain name reached a PostgreSQL query (a 500), and one kept in an
event would stop the projection follower on every retry. Refused once, at the edge, as
`invalid_request`, before any handler runs.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote

from litestar import Request

from domain.errors import invalid

MESSAGE = "Text must not contain NUL (U+0000) characters."


def _holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_holds_nul(k) or _holds_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_nul(item) for item in value)
    return False


async def refuse_nul_characters(request: Request[Any, Any, Any]) -> None:
    if "\x00" in request.scope["path"]:
        raise invalid(MESSAGE)
    query = request.scope.get("query_string", b"").decode("latin-1")
    if "%00" in query and "\x00" in unquote(query):
        raise invalid(MESSAGE)
    if request.method in ("GET", "HEAD", "DELETE"):
        return
    body = await request.body()  # kept on the connection: the handler reads it again for free
    if b"\\u0000" not in body and b"\x00" not in body:
        return
    try:
        decoded = json.loads(body)
    except ValueError:
        return  # not JSON: the handler's decoding answers
    if _holds_nul(decoded):
        raise invalid(MESSAGE)
