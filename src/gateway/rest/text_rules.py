"""No NUL character in any partner input: PostgreSQL text cannot hold one.

Found by the fuzzer: a NUL in a domain name reached a PostgreSQL query (a 500), and one kept in an
event would stop the projection follower on every retry. Refused once, at the edge, as
`invalid_request`, before any handler runs.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl

from litestar import Request

from domain.errors import invalid
from gateway.rest.json_bodies import TOO_DEEP

MESSAGE = "Text must not contain NUL (U+0000) characters."


def nul_path(value: Any, path: str = "") -> str | None:
    """The dot path (`domains[0]`, `credentials.api_key`) of the first text holding a NUL in a
    decoded JSON value, or None. A NUL in a property's name is that property's fault."""
    if isinstance(value, str):
        return path if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{_shown(key)}" if path else _shown(key)
            found = here if "\x00" in key else nul_path(item, here)
            if found is not None:
                return found
    if isinstance(value, list):
        for number, item in enumerate(value):
            found = nul_path(item, f"{path}[{number}]")
            if found is not None:
                return found
    return None


def _shown(name: str) -> str:
    """A property name as `field` names it: the NUL refused is not sent back raw."""
    return name.replace("\x00", "\\u0000")


async def refuse_nul_characters(request: Request[Any, Any, Any]) -> None:
    if "\x00" in request.scope["path"]:
        params = request.scope.get("path_params") or {}
        named = [name for name, value in params.items() if "\x00" in str(value)]
        raise invalid(MESSAGE, named[0] if named else None)
    query = request.scope.get("query_string", b"").decode("latin-1")
    if "%00" in query:
        for name, value in parse_qsl(query, keep_blank_values=True):
            if "\x00" in name or "\x00" in value:
                raise invalid(MESSAGE, _shown(name))
    if request.method in ("GET", "HEAD", "DELETE"):
        return
    body = await request.body()  # kept on the connection: the handler reads it again for free
    if b"\\u0000" not in body and b"\x00" not in body:
        return
    try:
        decoded = json.loads(body)
        field = nul_path(decoded)
    except ValueError:
        return  # not JSON: the handler's decoding answers
    except RecursionError:
        raise invalid(TOO_DEEP) from None
    if field is not None:
        raise invalid(MESSAGE, field or None)
