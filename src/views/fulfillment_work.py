"""How an order looks as the fulfillment team's work (the `fulfillment_work` read model)."""

from __future__ import annotations

from typing import Any

from domain.order_steps import next_step
from domain.orders import Order
from infra.clock import iso
from infra.ids import public_id


def work_view(order: Order) -> dict[str, Any]:
    """An order as work, without the parts that depend on when it is read."""
    return {
        "order_id": public_id("ord", order.id),
        "org_id": order.org_id,
        "environment": order.environment,
        "kind": order.kind,
        "status": order.status,
        "steps_done": list(order.steps_done),
        "next_step": next_step(order) or "",
        "failed_step": order.failed_step or "",
        "reason": order.step_failure or order.reason or "",
        "pending_action_id": order.pending_action_id or "",
        "updated_at": iso(order.updated_at),
    }
