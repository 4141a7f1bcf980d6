"""`POST /quotes`: the price of an order body, with no side effect; `limited` keys may call it."""

from __future__ import annotations

from typing import Any, Literal

import anyio
import msgspec
from litestar import Controller, Request, post

from gateway.rest.auth import WRITE_LIMITED, principal_of
from gateway.rest.lists import container_of
from gateway.rest.order_bodies import OrderBody, decode_body
from gateway.rest.orders import UNKNOWN_TARGET
from gateway.rest.schema_notes import ResponseDoc
from services.catalog.pricing import __doc__ as PRICES
from services.orders.use_cases import quote


class PriceLine(msgspec.Struct, kw_only=True):
    """One priced line: `license` lines carry `suite`, `domain_registration` lines `domain`."""

    type: Literal["license", "domain_registration"]
    quantity: int
    unit_price_cents: int
    amount_cents: int
    suite: Literal["suite_a", "suite_b"] | msgspec.UnsetType = msgspec.UNSET
    domain: str | msgspec.UnsetType = msgspec.UNSET


class QuoteOut(msgspec.Struct, kw_only=True):
    """The price of an order body; the two wallet fields are answered by live keys only."""

    currency: str
    total_cents: int
    price_cents: int  # equal to total_cents: the name an order carries its price under
    lines: list[PriceLine]
    environment: Literal["test", "live"]
    billed: bool  # true on live keys: the order would be charged to the wallet
    domains_to_register: int
    domains_from_inventory: int
    wallet_balance_cents: int | msgspec.UnsetType = msgspec.UNSET
    covered_by_wallet: bool | msgspec.UnsetType = msgspec.UNSET


class QuoteResponse(msgspec.Struct):
    data: QuoteOut


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
    async def create(self, request: Request[Any, Any, Any]) -> dict[str, Any]:
        principal = principal_of(request)
        container = container_of(request)
        body = msgspec.to_builtins(await decode_body(request, OrderBody))
        result = await anyio.to_thread.run_sync(lambda: quote(container, principal, body))
        return {"data": result}
