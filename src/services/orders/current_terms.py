"""An order shows each domain's `auto_renew` as it is now, not as the order placed it.

`PATCH /domains/{id}` changes a bought domain's term (its own aggregate, decisions.md 6), not
the orders that list the domain; the order views read the current choice from the terms' read
model so that `GET /orders` and `GET /domains` never disagree about one `dom_`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

import msgspec

from views.orders import OrderDomain, OrderOut

if TYPE_CHECKING:
    from runtime.container import Container


def with_current_terms(container: Container, orders: list[OrderOut]) -> list[OrderOut]:
    ids = {d.id for order in orders for d in (*order.domains, *order.warm_domains)}
    if not ids:
        return orders
    marks = ", ".join("?" * len(ids))
    with container.read_db.read() as cur:
        rows = cur.execute(
            f"SELECT id, auto_renew FROM domain_terms WHERE id IN ({marks})", tuple(ids)
        ).fetchall()
    chosen = {str(row["id"]): bool(row["auto_renew"]) for row in rows}
    if not chosen:
        return orders
    return [_with(order, chosen) for order in orders]


def _with(order: OrderOut, chosen: dict[str, bool]) -> OrderOut:
    return msgspec.structs.replace(
        order,
        domains=[_current(d, chosen) for d in order.domains],
        warm_domains=[_current(d, chosen) for d in order.warm_domains],
    )


Item = TypeVar("Item", bound=OrderDomain)


def _current(item: Item, chosen: dict[str, bool]) -> Item:
    renew = chosen.get(item.id, item.auto_renew)
    return item if renew == item.auto_renew else msgspec.structs.replace(item, auto_renew=renew)
