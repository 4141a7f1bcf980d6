"""GET /me: the cheapest key check (spec 4.1).

The Litestar handler documents the route and serves its variants (a query string, a trailing
slash); the plain `GET /partner/v1/me` that clients poll is answered by `serve_me` as raw ASGI
from the outermost layer, the same checks and bytes without the framework's per-request layers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
from litestar import Controller, Request, get

from gateway.rest.auth import authorize_off_loop, principal_of
from gateway.rest.errors import send_raw_error
from services.accounts.keys import Principal, describe_me
from views.me import MeResponse

if TYPE_CHECKING:
    from runtime.container import Container


class MeController(Controller):
    path = "/me"
    tags = ["account"]

    @get(
        operation_id="getMe",
        summary="Check the API key and see its organization",
        description="The cheapest authenticated call: answers the key's environment and "
        "permission preset and the organization it belongs to, or 401 for a missing, malformed "
        "or revoked key. Spends one request of the rate limit like any other.",
    )
    async def me(self, request: Request[Any, Any, Any]) -> MeResponse:
        return me_response(principal_of(request))


def me_response(principal: Principal) -> MeResponse:
    return MeResponse(describe_me(principal))


ME_PATH = "/partner/v1/me"
_encode = msgspec.json.Encoder().encode


async def serve_me(container: Container, scope: dict[str, Any], send: Any) -> None:
    """`GET /partner/v1/me` as raw ASGI: what the Litestar route answers, byte for byte."""
    scope["path_template"] = ME_PATH
    try:
        checked, rate_headers = await authorize_off_loop(container, scope)
    except Exception as error:  # noqa: BLE001 - answered like Litestar's exception handler
        await send_raw_error(send, scope["request_id"], error, f"GET {ME_PATH}")
        return
    body = _encode(me_response(checked.principal))
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", b"%d" % len(body)),
        *rate_headers,
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
