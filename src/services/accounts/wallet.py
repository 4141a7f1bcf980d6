"""Wallet use cases: operator credits, charges and refunds for orders, the ledger view."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from domain.errors import invalid
from domain.wallet import CURRENCY, Wallet, wallet_id
from infra.clock import iso

if TYPE_CHECKING:
    from runtime.container import Container

MAX_CREDIT_CENTS = 10**12


def load_wallet(container: Container, org_id: str, environment: str) -> Wallet:
    """The wallet, opened (unsaved) on first use so a new organization reads as balance 0."""
    found = container.store.find(wallet_id(org_id, environment), Wallet)
    if isinstance(found, Wallet):
        return found
    return Wallet(org_id=org_id, environment=environment, opened_at=container.clock.now())


def credit(container: Container, org_id: str, cents: int, environment: str = "live") -> dict[str, Any]:
    if not 0 < cents <= MAX_CREDIT_CENTS:
        raise invalid(
            f"The amount must be between 1 and {MAX_CREDIT_CENTS} cents.", "amount_cents"
        )
    org_id = str(container.accounts.describe_organization(container.accounts.organization(org_id))["id"])

    def run() -> dict[str, Any]:
        wallet = load_wallet(container, org_id, environment)
        wallet.credit(cents, "Operator credit", container.clock.now())
        container.store.save(wallet)
        return {"org_id": org_id, "environment": environment, "balance_cents": wallet.balance_cents}

    return container.unit_of_work.retrying(run)


def wallet_view(wallet: Wallet) -> dict[str, Any]:
    return {
        "environment": wallet.environment,
        "balance_cents": wallet.balance_cents,
        "currency": CURRENCY,
        # Newest first, like every list of the API.
        "entries": [
            {**entry, "currency": CURRENCY, "created_at": iso(entry["created_at"])}
            for entry in reversed(wallet.entries)
        ],
    }
