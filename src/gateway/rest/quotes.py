"""`POST /quotes`: the price of an order body, with no side effect; `limited` keys may call it."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
from litestar import Controller, Request, post

from gateway.rest.auth import WRITE_LIMITED, principal_of
from gateway.rest.lists import container_of
from gateway.rest.order_bodies import OrderBody, decode_body
from services.orders import quote
from services.pricing import __doc__ as PRICES


class QuotesController(Controller):
    path = "/quotes"
    tags = ["orders"]

    @post(
        operation_id="createQuote",
        summary="Price an order body without placing it",
        description=(PRICES or "")
        + "\nThe body and checks are those of `POST /orders`; nothing is recorded or charged.",
        status_code=200,
        opt=WRITE_LIMITED,
    )
    async def create(self, request: Request[Any, Any, Any]) -> dict[str, Any]:
        principal = principal_of(request)
        container = container_of(request)
        body = msgspec.to_builtins(await decode_body(request, OrderBody))
        result = await anyio.to_thread.run_sync(lambda: quote(container, principal, body))
        return {"data": result}
