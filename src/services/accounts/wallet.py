"""Wallet use cases: operator credits, charges and refunds for orders, the ledger view."""

from __future__ import annotations

from typing import TYPE_CHECKING

from domain.errors import invalid
from domain.wallet import Wallet, wallet_id
from infra.ids import public_id
from services.accounts.commands import MAX_CREDIT_CENTS, CreditWallet
from views.wallet import WalletCredited

if TYPE_CHECKING:
    from runtime.container import Container


def load_wallet(container: Container, org_id: str, environment: str) -> Wallet:
    """The wallet, opened (unsaved) on first use so a new organization reads as balance 0."""
    found = container.store.find(wallet_id(org_id, environment), Wallet)
    if isinstance(found, Wallet):
        return found
    return Wallet(org_id=org_id, environment=environment, opened_at=container.clock.now())


def credit_wallet(container: Container, command: CreditWallet) -> WalletCredited:
    """An operator's credit (CLI, gRPC AdminService) to an organization's wallet."""
    cents, environment = command.amount_cents, command.environment
    if not 0 < cents <= MAX_CREDIT_CENTS:
        raise invalid(
            f"The amount must be between 1 and {MAX_CREDIT_CENTS} cents.", "amount_cents"
        )
    org_id = public_id("org", container.accounts.organization(command.org_id).id)

    def run() -> WalletCredited:
        wallet = load_wallet(container, org_id, environment)
        wallet.credit(cents, "Operator credit", container.clock.now())
        container.store.save(wallet)
        return WalletCredited(
            org_id=org_id, environment=environment, balance_cents=wallet.balance_cents
        )

    return container.unit_of_work.retrying(run)
