"""The `reason` a domain row on an order shows: the code a partner branches on, as the
order's `domain.action_required` webhook gives it (the pending action's kind, or
`nameservers_not_pointed` for a domain waiting for its own nameservers), never the order's
message. A failed order's domains keep its reason."""

from __future__ import annotations

from typing import Any

from domain.orders import DomainItem, Order
from domain.pending_actions import PendingAction
from infra.ids import parse_id


def row_reason(store: Any, order: Order, item: DomainItem, status: str) -> str | None:
    if status == "failed":
        return order.reason
    if status != "action_required":
        return None
    # A pending action's kind and details never change after it is made: any version of it
    # gives the same answer, to a live follower and to a replay alike.
    action_id = order.pending_action_id
    action = store.find(parse_id("act", action_id), PendingAction) if action_id else None
    if not isinstance(action, PendingAction):
        return order.reason
    return action.reason_for(item["domain"])
