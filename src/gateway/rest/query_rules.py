"""Query parameters a route does not take are refused, not ignored.

A misspelt filter (`?stauts=active`) would otherwise answer the unfiltered list as if it had
been applied; Stripe refuses an unknown parameter for the same reason. Each route's parameters
are the names its handler declares (Litestar keeps the parsed signature on the handler).
"""

from __future__ import annotations

from typing import Any

from litestar import Request

from domain.errors import invalid

# Handler parameters Litestar fills from elsewhere than the query string.
_NOT_QUERY = frozenset({"request", "data", "state", "headers", "cookies", "scope", "socket", "body"})
_declared: dict[int, frozenset[str]] = {}


def query_names(handler: Any) -> frozenset[str]:
    """The names the handler may be given in the query string (path parameters included:
    they are never in the query string, and the check need not tell them apart)."""
    key = id(handler)
    if key not in _declared:
        names = handler.parsed_fn_signature.parameters.keys()
        _declared[key] = frozenset(names) - _NOT_QUERY
    return _declared[key]


def refuse_unknown_query_parameters(request: Request[Any, Any, Any]) -> None:
    if not request.scope.get("query_string"):
        return
    allowed = query_names(request.route_handler)
    for name in request.query_params:
        if name not in allowed:
            raise invalid(f"Unknown query parameter {name!r}: this operation does not take it.", name)
