"""`POST /domains/purchase`: buy domains without inboxes (an ordinary order)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, post

from gateway.rest.auth import principal_of
from gateway.rest.idempotency import idempotent, require_idempotency_key
from gateway.rest.json_bodies import decode_body
from gateway.rest.lists import container_of
from gateway.rest.orders import ONE_ORDER
from gateway.rest.wallet import INSUFFICIENT_FUNDS
from gateway.rest.workspaces import UNKNOWN_WORKSPACE
from services.domains.commands import PurchaseDomains
from services.domains.purchase import __doc__ as PURCHASE_RULES
from services.domains.purchase import purchase_domains
from views.orders import OrderResponse


class PurchaseController(Controller):
    path = "/domains/purchase"
    tags = ["domains"]

    @post(
        operation_id="purchaseDomains",
        summary="Buy domains (full preset; Idempotency-Key required)",
        description=PURCHASE_RULES,
        responses={201: ONE_ORDER, **INSUFFICIENT_FUNDS, **UNKNOWN_WORKSPACE},
    )
    async def purchase(self, request: Request[Any, Any, Any]) -> Response[OrderResponse]:
        principal = principal_of(request)
        container = container_of(request)
        require_idempotency_key(request)
        command = await decode_body(request, PurchaseDomains)
        return await idempotent(
            request,
            lambda: OrderResponse(purchase_domains(container, principal, command)),
            status_code=201,
        )
