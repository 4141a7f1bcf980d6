"""How an order looks as the fulfillment team's work (the `fulfillment_work` read model), and
the work list the FulfillmentService and the CLI answer."""

from __future__ import annotations

import msgspec

from domain.order_steps import next_step
from domain.orders import ACTION_REQUIRED, IN_PROGRESS, Order
from infra.clock import iso
from infra.ids import public_id


class OrderWork(msgspec.Struct, kw_only=True):
    """An order as work, without the parts that depend on when it is read: the document the
    read model stores."""

    order_id: str
    org_id: str
    environment: str
    kind: str
    status: str
    steps_done: list[str]
    next_step: str
    failed_step: str
    reason: str
    pending_action_id: str
    updated_at: str


class WorkItem(OrderWork, kw_only=True):
    """The stored work as read at a moment: how long it has been idle, whether that is stuck,
    and the read-model position that follows changes."""

    idle_seconds: float
    stuck: bool
    position: int


class WorkList(msgspec.Struct, kw_only=True):
    stuck_after_seconds: float
    items: list[WorkItem]


def work_view(order: Order) -> OrderWork:
    # A sandbox order completes without recording steps, and a finished or cancelling order
    # runs none: no next step for either.
    running = order.status in (IN_PROGRESS, ACTION_REQUIRED)
    return OrderWork(
        order_id=public_id("ord", order.id),
        org_id=order.org_id,
        environment=order.environment,
        kind=order.kind,
        status=order.status,
        steps_done=list(order.steps_done),
        next_step=(next_step(order) if running else None) or "",
        failed_step=order.failed_step or "",
        reason=order.step_failure or order.reason or "",
        pending_action_id=order.pending_action_id or "",
        updated_at=iso(order.updated_at),
    )
