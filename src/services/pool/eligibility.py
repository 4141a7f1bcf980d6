"""Who may enter the pool (spec 4.2): a domain of the caller with at least one active `suite_a`
inbox on a paid, completed `suite_a` order, a complete provider mailbox identity, and no
burned provider result.

"Paid" is a live order whose charge stands; sandbox orders never bill, so a completed sandbox
order counts as paid there. "Complete identity": every active `suite_a` inbox has an address
and a persona with first and last name, and the order routes to a workspace.

| reason | meaning |
| --- | --- |
| `not_in_inventory` | no domain of this name in the caller's inventory (this environment) |
| `not_on_suite_a_order` | the domain is not on an active order for `suite_a` |
| `order_not_paid` | the order is not completed, or (live) was never charged |
| `order_cancelled` | the order's cancellation was accepted (`cancel_scheduled`) or is done |
| `no_active_suite_a_inbox` | no active `suite_a` inbox on the domain |
| `incomplete_mailbox_identity` | an inbox lacks its address or persona, or no workspace |
| `burned` | the mail provider reported the domain burned (`brj_`) |
| `swap_in_progress` | a swap of the domain is under way (it leaves the order, or its inboxes are renamed, when the swap completes) |
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from domain.orders import CANCEL_SCHEDULED, CANCELLED, COMPLETED, ORDER, InboxItem, Order
from infra.ids import parse_id
from projections.domain_lookups import tenant_rows_by_name
from services.pool.records import find_pool_domain, swap_under_way

if TYPE_CHECKING:
    from infra.database import Row
    from runtime.container import Container


@dataclass(frozen=True)
class Eligibility:
    name: str
    reason: str | None = None  # None: eligible
    dom_id: str = ""
    order_id: str = ""
    inbox_count: int = 0


def _identity_complete(inbox: InboxItem) -> bool:
    persona = inbox.get("persona") or {}
    return bool(
        inbox.get("address")
        and str(persona.get("first_name") or "").strip()
        and str(persona.get("last_name") or "").strip()
    )


def unbacked_reason(order: Order | None) -> str:
    """Why an order no longer backs its domain's place in the pool."""
    if order is not None and order.status in (CANCEL_SCHEDULED, CANCELLED):
        return "order_cancelled"
    return "order_not_paid"


def _order_check(container: Container, name: str, row: Row) -> Eligibility:
    order = container.store.find(parse_id("ord", row["order_id"] or ""), Order)
    if not isinstance(order, Order) or order.kind != ORDER:
        return Eligibility(name, "not_on_suite_a_order")
    paid = order.environment != "live" or order.charged_cents > order.refunded_cents
    if order.status != COMPLETED or not paid:
        return Eligibility(name, unbacked_reason(order))
    items = [d for d in order.domains if d["domain"] == name and d.get("suite") == "suite_a"]
    inboxes = [
        inbox
        for item in items
        for inbox in item.get("inboxes", [])
        if inbox.get("suite") == "suite_a" and inbox.get("status") == "active"
    ]
    if not inboxes:
        return Eligibility(name, "no_active_suite_a_inbox")
    workspace = order.destination["workspace_id"] if order.destination else None
    if not workspace or not all(_identity_complete(inbox) for inbox in inboxes):
        return Eligibility(name, "incomplete_mailbox_identity")
    if swap_under_way(container, order, name):
        return Eligibility(name, "swap_in_progress")
    return Eligibility(name, None, row["id"], row["order_id"], len(inboxes))


def check_eligibility(
    container: Container, org_id: str, environment: str, names: list[str]
) -> list[Eligibility]:
    with container.read_db.read() as cur:
        rows = tenant_rows_by_name(cur, f"{org_id}:{environment}", names)
    results = []
    for name in names:
        mine = [r for r in rows if r["name"] == name]
        pool = find_pool_domain(container, org_id, environment, name)
        if pool is not None and pool.burned:
            results.append(Eligibility(name, "burned"))
            continue
        if not mine:
            results.append(Eligibility(name, "not_in_inventory"))
            continue
        on_order = [
            r for r in mine if r["category"] == "connected" and r["suite"] == "suite_a"
        ]
        if not on_order:
            results.append(Eligibility(name, "not_on_suite_a_order"))
            continue
        results.append(_order_check(container, name, on_order[-1]))
    return results
