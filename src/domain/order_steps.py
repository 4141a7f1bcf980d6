"""The provisioning steps of an order, by name, and the pending-action kinds a step can open;
what each step does is `services/orders/steps.py`."""

from __future__ import annotations

from domain.orders import PURCHASE, Order

ORDER_STEPS = ("register", "dns", "mailboxes", "sequencer")
# Pending action kinds a step can open (`POST /orders/pending/{id}/resolve` unblocks them).
PROFILE_PICTURE = "profile_picture_url"
NAMESERVERS = "nameservers"
PURCHASE_STEPS = ("register",)


def steps_for(order: Order) -> tuple[str, ...]:
    return PURCHASE_STEPS if order.kind == PURCHASE else ORDER_STEPS


def next_step(order: Order) -> str | None:
    for step in steps_for(order):
        if step not in order.steps_done:
            return step
    return None
