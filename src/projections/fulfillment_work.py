"""The fulfillment team's work list: one row per order with where its provisioning stands.

Rows stay after the order finishes (with its final status), so a stream that follows the
`position` column also sees work leave the list; lists filter on the busy statuses.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from domain.orders import Order
from infra.ids import public_id
from projections.base import ReadModel, on
from projections.orders import ORDER_EVENTS
from views.fulfillment_work import work_view

WORK_EVENTS = (*ORDER_EVENTS, Order.StepFailed, Order.StepRetried)


class FulfillmentWork(ReadModel):
    name = "fulfillment_work"
    tables = ("fulfillment_work",)
    ddl = (
        "CREATE TABLE IF NOT EXISTS fulfillment_work (order_id TEXT PRIMARY KEY, "
        "org_id TEXT NOT NULL, position BIGINT NOT NULL, status TEXT NOT NULL, "
        "updated_at DOUBLE PRECISION NOT NULL, doc TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS fulfillment_work_status ON fulfillment_work (status, updated_at)",
        "CREATE INDEX IF NOT EXISTS fulfillment_work_position ON fulfillment_work (position)",
    )

    def attach(self, store: Any) -> None:
        self.store = store

    @on(*WORK_EVENTS)
    def order_changed(self, cur: Any, event: Any, position: int) -> None:
        order: Order = self.store.at_version(event.originator_id, event.originator_version)
        cur.execute(
            "INSERT INTO fulfillment_work (order_id, org_id, position, status, updated_at, doc) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (order_id) DO UPDATE SET "
            "position = excluded.position, status = excluded.status, "
            "updated_at = excluded.updated_at, doc = excluded.doc",
            (
                public_id("ord", order.id),
                order.org_id,
                position,
                order.status,
                order.updated_at,
                json.dumps(msgspec.to_builtins(work_view(order))),
            ),
        )
