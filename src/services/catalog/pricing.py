"""Prices, in US cents.

Licenses are billed per inbox for the first month, at order acceptance:

| suite     | price per inbox license |
| --------- | ----------------------- |
| `suite_a` | 450 cents               |
| `suite_b` | 600 cents               |

Domains the service registers for an order (named in no request and not taken from inventory)
and domains bought with `POST /domains/purchase` cost their TLD's registration price (the
registrar adapter's catalog). Domains already owned (imported, purchased earlier, released by a
cancelled order) cost nothing. Sandbox orders are priced the same way but never charged.
"""

from __future__ import annotations

from adapters import registrar
from domain.order_payloads import license_count
from domain.orders import DomainItem, OrderShape, Price, PriceLine
from domain.wallet import CURRENCY
from schema.vocabulary import Suite

LICENSE_PRICE_CENTS: dict[Suite, int] = {"suite_a": 450, "suite_b": 600}


def registration_price(domain: str) -> int:
    return registrar.prices(domain)[0]


def price_of(shape: OrderShape, domains: list[DomainItem]) -> Price:
    """The price breakdown of an order: license lines per suite and one line per bought domain."""
    lines: list[PriceLine] = []
    for suite, unit in LICENSE_PRICE_CENTS.items():
        quantity = license_count(shape, suite)
        if quantity:
            lines.append(
                {
                    "type": "license",
                    "suite": suite,
                    "quantity": quantity,
                    "unit_price_cents": unit,
                    "amount_cents": unit * quantity,
                }
            )
    for item in domains:
        if item["price_cents"]:
            lines.append(
                {
                    "type": "domain_registration",
                    "domain": item["domain"],
                    "quantity": 1,
                    "unit_price_cents": item["price_cents"],
                    "amount_cents": item["price_cents"],
                }
            )
    return {
        "currency": CURRENCY,
        "total_cents": sum(line["amount_cents"] for line in lines),
        "lines": lines,
    }
