"""A JSON body that names one property twice in an object is refused, at any depth.

msgspec, like most parsers, keeps the last of the two silently: `suite_a` sent twice in an order
would place the order the second one describes, whatever the partner meant. The body is ambiguous,
so it is `invalid_request`, with `field` the dot path of the repeated property.

The check parses with the standard library's C scanner and a hook that only compares the number
of pairs with the number of distinct names (a few microseconds for an order body); the path is
looked for only once a repeat is known.

A query parameter given twice (`?per_page=5&per_page=100`) is as ambiguous (no list parameter
takes repeats) and refused the same way.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl

from litestar import Request

from domain.errors import invalid
from gateway.rest.json_bodies import TOO_DEEP

_BODILESS = frozenset({"GET", "HEAD", "DELETE", "OPTIONS"})


class _Repeated(Exception):
    """Raised from the parser's hook to stop at the first object with a repeated name."""


def _distinct_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    built = dict(pairs)
    if len(built) != len(pairs):
        raise _Repeated
    return built


class _Object(list[tuple[str, Any]]):
    """An object as its pairs in the order sent, told apart from an array when walked."""


def repeated_key_path(raw: bytes) -> str | None:
    """The dot path (`suite_a`, `destination.workspace_id`, `domains[1].domain`) of the first
    repeated property name in a JSON text, or None: also for a text that is not JSON, which
    the body's own decoding refuses."""
    try:
        json.loads(raw, object_pairs_hook=_distinct_pairs)
        return None
    except _Repeated:
        return _first_repeat(json.loads(raw, object_pairs_hook=_Object), "")
    except ValueError:
        return None


def _first_repeat(value: Any, path: str) -> str | None:
    if isinstance(value, _Object):
        seen: set[str] = set()
        for name, item in value:
            here = f"{path}.{name}" if path else name
            if name in seen:
                return here
            seen.add(name)
            found = _first_repeat(item, here)
            if found is not None:
                return found
        return None
    if isinstance(value, list):
        for number, item in enumerate(value):
            found = _first_repeat(item, f"{path}[{number}]")
            if found is not None:
                return found
    return None


def repeated_query_name(query: bytes) -> str | None:
    """The first query parameter name given twice, or None."""
    if query.count(b"=") + query.count(b"&") < 2:
        return None  # at most one parameter
    seen: set[str] = set()
    for name, _ in parse_qsl(query.decode("latin-1"), keep_blank_values=True):
        if name in seen:
            return name
        seen.add(name)
    return None


async def refuse_repeated_keys(request: Request[Any, Any, Any]) -> None:
    name = repeated_query_name(request.scope.get("query_string", b""))
    if name is not None:
        raise invalid(f"The query parameter '{name}' is given more than once.", name)
    if request.method in _BODILESS:
        return
    body = await request.body()  # kept on the connection: the handler reads it again for free
    if body.count(b":") < 2:
        return  # fewer than two properties in the whole body: nothing can repeat
    try:
        path = repeated_key_path(body)
    except RecursionError:
        raise invalid(TOO_DEEP) from None
    if path is not None:
        parent, _, name = path.rpartition(".")
        where = f" in '{parent}'" if parent else ""
        raise invalid(f"The property '{name}' is given more than once{where}.", path)
