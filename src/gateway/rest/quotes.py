"""`POST /quotes`: the price of an order body, with no side effect; `limited` keys may call it."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, post

from gateway.rest.auth import WRITE_LIMITED, principal_of
from gateway.rest.json_bodies import decode_body
from gateway.rest.lists import container_of
from gateway.rest.orders import UNKNOWN_TARGET
from gateway.rest.schema_notes import ResponseDoc
from infra.blocking import run_blocking
from services.catalog.pricing import __doc__ as PRICES
from services.orders.commands import PlaceOrder
from services.orders.use_cases import quote
from views.orders import QuoteResponse


class QuotesController(Controller):
    path = "/quotes"
    tags = ["orders"]

    @post(
        operation_id="createQuote",
        summary="Price an order body without placing it",
        description=(PRICES or "")
        + "\nThe body and checks are those of `POST /orders`; nothing is recorded or charged. "
        "A `domain_registration` line for a domain the service would choose names an example: "
        "the order picks its own name at placement, at the same TLD price.",
        status_code=200,
        opt=WRITE_LIMITED,
        responses={
            200: ResponseDoc(QuoteResponse, description="The price of the order body"),
            **UNKNOWN_TARGET,
        },
    )
    async def create(self, request: Request[Any, Any, Any]) -> QuoteResponse:
        principal = principal_of(request)
        container = container_of(request)
        command = await decode_body(request, PlaceOrder)
        result = await run_blocking(lambda: quote(container, principal, command))
        return QuoteResponse(result)
