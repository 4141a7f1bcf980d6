"""How a wallet looks in responses: the balance and the ledger, newest first; and what an
operator's credit answers."""

from __future__ import annotations

from typing import Literal

import msgspec

from domain.wallet import CURRENCY, Wallet
from infra.clock import iso
from schema.vocabulary import Environment
from views.pages import Links, Meta


class WalletEntry(msgspec.Struct):
    """One ledger entry; `order_id` is null on operator credits. A `renewal` is a domain's
    yearly renewal (0 cents in the sandbox), with the order that bought the domain."""

    type: Literal["credit", "charge", "refund", "renewal"]
    amount_cents: int
    balance_after_cents: int
    order_id: str | None
    description: str
    created_at: str
    currency: str


class WalletOut(msgspec.Struct):
    environment: Environment
    balance_cents: int
    currency: str
    entries: list[WalletEntry]  # newest first


class WalletResponse(msgspec.Struct):
    data: WalletOut
    links: Links
    meta: Meta


class WalletCredited(msgspec.Struct, kw_only=True):
    """An operator's credit: the wallet it went to and its balance after."""

    org_id: str
    environment: Environment
    balance_cents: int


def wallet_view(wallet: Wallet) -> WalletOut:
    return msgspec.convert(
        {
            "environment": wallet.environment,
            "balance_cents": wallet.balance_cents,
            "currency": CURRENCY,
            # Newest first, like every list of the API.
            "entries": [
                {**entry, "currency": CURRENCY, "created_at": iso(entry["created_at"])}
                for entry in reversed(wallet.entries)
            ],
        },
        WalletOut,
    )
