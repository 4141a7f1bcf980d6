"""Outermost ASGI layer: a request id and metrics for every response, matched route or not."""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

from gateway.rest import metrics

ASGIApp = Any
# A route answered here without the framework: (scope, send) with the request id in the scope.
DirectRoute = Callable[[dict[str, Any], Any], Awaitable[None]]


# Unique, not secret: a generator seeded from the OS spares the getrandom() system call of uuid4
# per request, which is costly on sandboxed kernels. Our own instance, not the module's: anything
# that seeds the global one (Hypothesis does, per example) would otherwise repeat request ids.
_ids = random.Random()
os.register_at_fork(after_in_child=_ids.seed)


# The version (4) and variant (RFC 4122) bits of a UUID, set by hand: building a uuid.UUID
# object only to print it cost more than the rest of the request-id layer.
_KEEP = ~((0xF000 << 64) | (0xC000 << 48))
_VERSION_4 = (0x4000 << 64) | (0x8000 << 48)


def new_request_id() -> str:
    h = "%032x" % ((_ids.getrandbits(128) & _KEEP) | _VERSION_4)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class RequestIdMiddleware:
    def __init__(self, app: ASGIApp, direct_gets: dict[str, DirectRoute] | None = None) -> None:
        self.app = app
        # Hot GET paths served without Litestar's layers; only in their plain form (no query
        # string), anything else about them is left to the framework.
        self.direct_gets = direct_gets or {}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = new_request_id()
        scope["request_id"] = request_id
        method = scope["method"]
        if method == "HEAD":
            # RFC 9110 9.3.2: HEAD is GET without the content, same status and headers (with
            # GET's Content-Length), wherever GET is served. The server keeps its own scope,
            # which still says HEAD, so it sends no body either.
            scope = {**scope, "method": "GET"}
        header = (b"service-request-id", request_id.encode())
        started = time.perf_counter()
        status_seen = 500
        response_started = False

        async def send_with_id(message: dict[str, Any]) -> None:
            nonlocal status_seen, response_started
            if message["type"] == "http.response.start":
                response_started = True
                status_seen = message["status"]
                message["headers"] = [*message.get("headers", []), header]
            elif method == "HEAD" and message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        direct = None
        if scope["method"] == "GET" and not scope.get("query_string"):
            direct = self.direct_gets.get(scope["path"])
        try:
            if direct is not None:
                await direct(scope, send_with_id)
            else:
                await self.app(scope, receive, send_with_id)
        except Exception:
            if response_started:
                raise
            status_seen = 500
            await _send_internal_error(send_with_id, request_id)
        finally:
            route = scope.get("path_template") or "unmatched"
            metrics.observe_request(method, route, status_seen, time.perf_counter() - started)


async def _send_internal_error(send: Any, request_id: str) -> None:
    """Through `send_with_id`, which adds the request id and keeps a HEAD answer bodiless."""
    body = json.dumps(
        {
            "error": {
                "code": "internal_error",
                "message": "Internal error.",
                "request_id": request_id,
            }
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 500,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": body})
