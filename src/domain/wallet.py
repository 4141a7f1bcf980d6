"""The billing ledger of one organization in one environment: credits, charges, refunds.

The balance never goes below zero: a charge the balance cannot cover is refused
(402 `insufficient_funds`) and nothing is recorded. Sandbox wallets exist but are never charged.
"""

from __future__ import annotations

import uuid
from typing import Any, ClassVar

from eventsourcing.domain import Aggregate, event

from domain.errors import DomainError, invalid

CURRENCY = "usd"
_WALLET_NAMESPACE = uuid.UUID("a3c1f9a2-6d4e-4f0b-8b7e-2c5d9e1f4a60")


def wallet_id(org_id: str, environment: str) -> uuid.UUID:
    """One wallet per organization and environment, found without a lookup table."""
    return uuid.uuid5(_WALLET_NAMESPACE, f"{org_id}:{environment}")


class Wallet(Aggregate):
    # Its events, made by `@event` below: named here so that code using them is checked.
    Opened: ClassVar[type[Aggregate.Event]]
    Credited: ClassVar[type[Aggregate.Event]]
    Charged: ClassVar[type[Aggregate.Event]]
    RenewalCharged: ClassVar[type[Aggregate.Event]]
    Refunded: ClassVar[type[Aggregate.Event]]

    @staticmethod
    def create_id(*_: Any, org_id: str, environment: str, **__: Any) -> uuid.UUID:
        return wallet_id(org_id, environment)

    @event("Opened")
    def __init__(self, *, org_id: str, environment: str, opened_at: float) -> None:
        self.org_id = org_id
        self.environment = environment
        self.balance_cents = 0
        self.entries: list[dict[str, Any]] = []
        self.opened_at = opened_at

    def credit(self, amount_cents: int, description: str, at: float) -> None:
        if amount_cents <= 0:
            raise invalid("A credit must be a positive number of cents.", "cents")
        self._credited(amount_cents=amount_cents, description=description, at=at)

    def charge(self, amount_cents: int, order_id: str, description: str, at: float) -> None:
        if amount_cents < 0:
            raise invalid("A charge cannot be negative.")
        if amount_cents > self.balance_cents:
            raise DomainError(
                "insufficient_funds",
                "The live wallet balance does not cover this charge; credit the wallet and retry.",
                details={"required_cents": amount_cents, "balance_cents": self.balance_cents},
            )
        if amount_cents:
            self._charged(
                amount_cents=amount_cents, order_id=order_id, description=description, at=at
            )

    def refund(self, amount_cents: int, order_id: str, description: str, at: float) -> None:
        if amount_cents > 0:
            self._refunded(
                amount_cents=amount_cents, order_id=order_id, description=description, at=at
            )

    def renew(self, amount_cents: int, order_id: str | None, description: str, at: float) -> None:
        """A domain's yearly renewal (decisions.md 6): recorded even at 0 cents (the sandbox),
        so the ledger shows each renewal. Refused, as a charge is, beyond the balance."""
        if amount_cents > self.balance_cents:
            raise DomainError(
                "insufficient_funds",
                "The wallet balance does not cover this renewal.",
                details={"required_cents": amount_cents, "balance_cents": self.balance_cents},
            )
        self._renewal_charged(
            amount_cents=amount_cents, order_id=order_id, description=description, at=at
        )

    def _entry(
        self, kind: str, amount: int, order_id: str | None, description: str, at: float
    ) -> None:
        self.entries = [
            *self.entries,
            {
                "type": kind,
                "amount_cents": amount,
                "balance_after_cents": self.balance_cents,
                "order_id": order_id,
                "description": description,
                "created_at": at,
            },
        ]

    @event("Credited")
    def _credited(self, *, amount_cents: int, description: str, at: float) -> None:
        self.balance_cents += amount_cents
        self._entry("credit", amount_cents, None, description, at)

    @event("Charged")
    def _charged(self, *, amount_cents: int, order_id: str, description: str, at: float) -> None:
        self.balance_cents -= amount_cents
        self._entry("charge", amount_cents, order_id, description, at)

    @event("RenewalCharged")
    def _renewal_charged(
        self, *, amount_cents: int, order_id: str | None, description: str, at: float
    ) -> None:
        self.balance_cents -= amount_cents
        self._entry("renewal", amount_cents, order_id, description, at)

    @event("Refunded")
    def _refunded(self, *, amount_cents: int, order_id: str, description: str, at: float) -> None:
        self.balance_cents += amount_cents
        self._entry("refund", amount_cents, order_id, description, at)
