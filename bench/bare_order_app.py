"""Ceiling: a bare Litestar app whose `POST /partner/v1/orders` only saves one eventsourcing
aggregate of two events to the store given in `BARE_ORDER_STORE` (eventsourcing settings as
JSON) and answers its id. No auth, idempotency, planning, read models or webhooks: the most
any HTTP order endpoint of this stack can append, to set beside the service's figure."""

from __future__ import annotations

import json
import os
from typing import Any
from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event
from litestar import Litestar, post


class BareOrder(Aggregate):
    def __init__(self, body: str) -> None:
        self.body = body

    @event("Completed")
    def complete(self, body: str) -> None:
        self.body = body


class BareOrders(Application[UUID]):
    name = "bareorders"


orders = BareOrders(json.loads(os.environ["BARE_ORDER_STORE"]))
PADDING = "p" * 700  # the orders' events are about 1 KB each


@post("/partner/v1/orders", sync_to_thread=True, status_code=201)
def place(data: dict[str, Any]) -> dict[str, Any]:
    text = json.dumps(data) + PADDING
    order = BareOrder(text)
    order.complete(text)
    orders.save(order)
    return {"data": {"id": str(order.id)}}


app = Litestar(route_handlers=[place])
