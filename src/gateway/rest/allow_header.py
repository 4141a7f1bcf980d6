"""`Allow` on OPTIONS and 405 answers lists every method of the path (HEAD with GET).

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
    """Register the `before_send` hook that sets `Allow` on OPTIONS and 405 answers."""
    allowed = allowed_methods(app)

    async def set_allow(message: Any, scope: Any) -> None:
        if message["type"] != "http.response.start":
            return
        headers = message.get("headers", [])
        if scope.get("method") == "OPTIONS":
            methods = allowed.get(scope.get("path_template", ""))
        elif message.get("status") == 405:
            # No route matched the method, so no template: Litestar listed the path's methods.
            sent = b", ".join(v for k, v in headers if k.lower() == b"allow").decode("latin-1")
            listed = {m.strip() for m in sent.split(",") if m.strip()}
            methods = ", ".join(sorted(_with_head(listed))).encode() if listed else None
        else:
            return
        if methods is not None:
            kept = [(k, v) for k, v in headers if k.lower() != b"allow"]
            message["headers"] = [*kept, (b"allow", methods)]

    app.before_send.append(set_allow)
