"""`GET /wallet`: the balance and ledger of the key's environment."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, get
from litestar.openapi.datastructures import ResponseSpec

from gateway.rest.auth import principal_of
from gateway.rest.lists import container_of
from services.wallet import load_wallet, wallet_view

# decisions.md 4: a code beyond the spec's list is allowed when documented. The OpenAPI
# document gives this status the error envelope, like every other error status.
INSUFFICIENT_FUNDS: dict[int, ResponseSpec] = {
    402: ResponseSpec(
        None,
        description="insufficient_funds: the live wallet does not cover the price "
        "(`details.required_cents`, `details.balance_cents`); nothing was charged",
    )
}


class WalletController(Controller):
    path = "/wallet"
    tags = ["billing"]

    @get(
        operation_id="getWallet",
        summary="Wallet balance and ledger entries (credits, charges, refunds), newest first",
        description=(
            "Live wallets are credited by the operator (`partner-api wallet credit ORG_ID "
            "CENTS`) and charged by live orders and purchases; the sandbox wallet is never "
            "charged."
        ),
    )
    async def get_wallet(self, request: Request[Any, Any, Any]) -> dict[str, Any]:
        principal = principal_of(request)
        wallet = load_wallet(container_of(request), principal.org_id, principal.environment)
        return {"data": wallet_view(wallet)}
