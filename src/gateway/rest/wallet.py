"""`GET /wallet`: the balance and ledger of the key's environment."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Controller, Request, get

from gateway.rest.auth import principal_of
from gateway.rest.lists import container_of, memory_page
from gateway.rest.schema_notes import ResponseDoc
from services.accounts.wallet import load_wallet
from views.wallet import WalletResponse, wallet_view

# decisions.md 4: a code beyond the spec's list is allowed when documented. The OpenAPI
# document gives this status the error envelope, like every other error status.
INSUFFICIENT_FUNDS: dict[int, ResponseDoc] = {
    402: ResponseDoc(
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
            "charged. The ledger `entries` are paged like every list (`per_page`, `page_token` "
            "from `links.next`; `meta.returned` counts the entries of this page); the balance "
            "is the whole wallet's."
        ),
        responses={200: ResponseDoc(WalletResponse, description="The key environment's wallet")},
    )
    async def get_wallet(
        self,
        request: Request[Any, Any, Any],
        per_page: int | None = None,
        page_token: str | None = None,
    ) -> WalletResponse:
        principal = principal_of(request)
        wallet = load_wallet(container_of(request), principal.org_id, principal.environment)
        view = wallet_view(wallet)
        # Entries are numbered oldest first and never removed: newest first, the numbers fall.
        numbered = list(zip(range(len(wallet.entries) - 1, -1, -1), view.entries, strict=True))
        paged = memory_page(request, numbered, per_page, page_token)
        page = msgspec.structs.replace(view, entries=paged["data"])
        return msgspec.convert({**paged, "data": page}, WalletResponse)
