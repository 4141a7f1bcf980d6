"""Query parameters a route does not take are refused, not ignored; whole numbers are written
as such.

A misspelt filter (`?stauts=active`) would otherwise answer the unfiltered list as if it had
been applied; Stripe refuses an unknown parameter for the same reason. Each route's parameters
are the names its handler declares (Litestar keeps the parsed signature on the handler).
An empty value is refused too, as an empty `status` always was. Litestar reads an integer
parameter leniently (`per_page=1e1` as 10); the document says
`integer`, so only digits are taken.
"""

from __future__ import annotations

import re
import types
import typing
from typing import Any

from litestar import Request

from domain.errors import invalid

# Handler parameters Litestar fills from elsewhere than the query string.
_NOT_QUERY = frozenset({"request", "data", "state", "headers", "cookies", "scope", "socket", "body"})
# As the decoder reads an integer: no leading zeros, which it refuses with a message of its own.
_WHOLE_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)")


def query_names(handler: Any) -> frozenset[str]:
    """The names the handler may be given in the query string (path parameters included:
    they are never in the query string, and the check need not tell them apart). Read from
    the handler each time, not cached by its id: a process that builds apps again (tests) may
    give a new handler a freed one's id."""
    return frozenset(handler.parsed_fn_signature.parameters) - _NOT_QUERY


def _is_integer(annotation: Any) -> bool:
    if annotation is int:
        return True
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        kinds = [kind for kind in typing.get_args(annotation) if kind is not type(None)]
        return kinds == [int]
    return False


def refuse_unknown_query_parameters(request: Request[Any, Any, Any]) -> None:
    if not request.scope.get("query_string"):
        return
    handler = request.route_handler
    allowed = query_names(handler)
    for name, value in request.query_params.items():
        if name not in allowed:
            raise invalid(f"Unknown query parameter {name!r}: this operation does not take it.", name)
        if not value.strip():
            # `?domain=` from an empty variable would otherwise list everything unfiltered.
            raise invalid(f"{name} must not be empty: leave it out to not filter on it.", name)
        annotation = handler.parsed_fn_signature.parameters[name].annotation
        if _is_integer(annotation) and not _WHOLE_NUMBER.fullmatch(value):
            raise invalid(f"{name} must be a whole number, without leading zeros.", name)
