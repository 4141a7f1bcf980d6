"""`Allow` on OPTIONS answers lists every method of the path (HEAD with GET).

Litestar builds a route's OPTIONS handler when the path's first handler is registered, and the
handler keeps reading that first route's methods: for `/orders` it answered `OPTIONS, POST`
without `GET`. The methods are known once the app is built, so the header is set from them as
the answer goes out.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from litestar import Litestar
from litestar.routes import HTTPRoute


def allowed_methods(app: Litestar) -> dict[str, bytes]:
    """Each HTTP path template of the app (`/bundles/{bundle_id}`, as routing names it) -> its
    `Allow` header value."""
    return {
        route.path_format: ", ".join(sorted(_with_head(route.methods))).encode()
        for route in app.routes
        if isinstance(route, HTTPRoute)
    }


def _with_head(methods: Collection[str]) -> set[str]:
    """The outermost layer answers HEAD wherever GET is served (`request_id.py`)."""
    return {*methods, "HEAD"} if "GET" in methods else set(methods)


def correct_allow_header(app: Litestar) -> None:
    """Register the `before_send` hook that sets `Allow` on OPTIONS answers."""
    allowed = allowed_methods(app)

    async def set_allow(message: Any, scope: Any) -> None:
        if message["type"] != "http.response.start" or scope.get("method") != "OPTIONS":
            return
        methods = allowed.get(scope.get("path_template", ""))
        if methods is not None:
            headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"allow"]
            message["headers"] = [*headers, (b"allow", methods)]

    app.before_send.append(set_allow)
