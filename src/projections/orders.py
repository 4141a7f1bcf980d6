"""Orders, the domains on them, and pending actions, as read models for lists and checks.

`order_domains` keeps one row per (order, domain) with the order's status (`released` for a
domain a failed order gave back, `detached` for one a swap took off the order), so placement can
ask "is this domain on a busy order", "which suites use it" and "what does this tenant own"
without scanning the event store.
"""

from __future__ import annotations

from typing import Any

import msgspec

from domain.domain_terms import DomainTerm
from domain.orders import ACTIVE_STATES, FAILED, DomainItem, Order
from domain.pending_actions import PendingAction
from infra.ids import public_id
from projections.base import ReadModel, on
from projections.domains import ORDER_EVENTS as DOMAIN_ROW_ORDER_EVENTS
from projections.domains import unregistered_at_cancel
from projections.json_text import json_text
from views.orders import order_view, pending_action_view

# The row status of a domain a failed order gave back (the order's own status is `failed`).
RELEASED_BY_FAILURE = "released"
# The row status of a domain a swap took off its order (at once, or after its warm period):
# the order's own status moves on without it.
DETACHED_BY_SWAP = "detached"
# The rows that can leave a domain free: a completed purchase, a cancelled order, a failed
# order the domain did not break, or a swap that took it off its order. The free-inventory
# query names it in these very words, so that both stores' planners see its partial index
# applies.
CAN_BE_FREE = (
    "((kind = 'purchase' AND status = 'completed') OR (kind = 'order' AND status IN "
    f"('cancelled', '{RELEASED_BY_FAILURE}', '{DETACHED_BY_SWAP}')))"
)

# The events that move a domain row, and the one that changes only the order.
ORDER_EVENTS = (*DOMAIN_ROW_ORDER_EVENTS, Order.DomainForwardingSet)


class OrderList(ReadModel):
    name = "orders"
    tables = ("orders", "order_domains", "pending_actions")
    ddl = (
        "CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, "
        "position BIGINT NOT NULL, status TEXT NOT NULL, workspace_id TEXT, kind TEXT NOT NULL, "
        "doc TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS orders_tenant ON orders (tenant, position)",
        "CREATE TABLE IF NOT EXISTS order_domains (order_id TEXT NOT NULL, tenant TEXT NOT NULL, "
        "domain TEXT NOT NULL, dom_id TEXT NOT NULL, suite TEXT, kind TEXT NOT NULL, "
        "status TEXT NOT NULL, workspace_id TEXT, customer_id TEXT, position BIGINT NOT NULL, "
        "PRIMARY KEY (order_id, domain))",
        "CREATE INDEX IF NOT EXISTS order_domains_name ON order_domains (tenant, domain)",
        # Placement asks for free inventory on every order: this index holds only the rows
        # that can be free, so it reads those, not every completed order of the tenant's
        # history (the index on tenant and status it replaces matched completed orders too).
        "DROP INDEX IF EXISTS order_domains_state",
        # Named for its condition: a condition that changes gets a new name (and the old
        # index goes), since CREATE INDEX IF NOT EXISTS keeps whatever holds the name.
        "DROP INDEX IF EXISTS order_domains_can_be_free",
        "CREATE INDEX IF NOT EXISTS order_domains_free_or_detached ON order_domains (tenant) "
        f"WHERE {CAN_BE_FREE}",
        "CREATE TABLE IF NOT EXISTS pending_actions (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, "
        "position BIGINT NOT NULL, order_id TEXT NOT NULL, status TEXT NOT NULL, doc TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS pending_actions_order ON pending_actions (tenant, order_id)",
    )

    def attach(self, store: Any) -> None:
        self.store = store

    def _at_version(self, event: Any) -> Any:
        return self.store.at_version(event.originator_id, event.originator_version)

    @on(*ORDER_EVENTS)
    def order_changed(self, cur: Any, event: Any, position: int) -> None:
        order: Order = self._at_version(event)
        order_id = public_id("ord", order.id)
        workspace_id = order.destination["workspace_id"] if order.destination else None
        # The response shape itself, so what a list answers and what one order answers agree.
        doc = json_text(msgspec.to_builtins(order_view(order)))  # json.dumps text, as ever
        if type(event) is Order.Placed:
            cur.execute(
                "INSERT INTO orders (id, tenant, position, status, workspace_id, kind, doc) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                (order_id, order.tenant, position, order.status, workspace_id, order.kind, doc),
            )
            self._domain_rows(cur, order, order_id, workspace_id, position)
            return
        cur.execute(
            "UPDATE orders SET status = ?, doc = ? WHERE id = ?", (order.status, doc, order_id)
        )
        cur.execute(
            "UPDATE order_domains SET status = ? WHERE order_id = ? AND status <> ?",
            (order.status, order_id, DETACHED_BY_SWAP),
        )
        if order.status == FAILED:
            self._released_by_failure(cur, order, order_id)
        # A swap brings a new domain onto the order and takes the old one off (at once, or
        # after a premium swap's warm period): the organization's still, free for a new order.
        if type(event) is Order.DomainSwapped:
            self._domain_rows(cur, order, order_id, workspace_id, position)
        detached: DomainItem | None = getattr(event, "detached_domain", None)
        dropped: list[DomainItem] = []
        if detached is not None and type(event) is Order.DomainLapsed:
            dropped.append(detached)  # no longer the organization's
        elif detached is not None:
            cur.execute(
                "UPDATE order_domains SET status = ? WHERE order_id = ? AND domain = ?",
                (DETACHED_BY_SWAP, order_id, detached["domain"]),
            )
        if type(event) is Order.Cancelled:
            dropped += unregistered_at_cancel(self.store, event)
        for item in dropped:
            cur.execute(
                "DELETE FROM order_domains WHERE order_id = ? AND domain = ?",
                (order_id, item["domain"]),
            )

    @on(DomainTerm.Lapsed)
    def name_lapsed(self, cur: Any, event: Any, position: int) -> None:
        """A lapsed name is no longer the organization's: every use of it goes, the rows of
        orders a swap took it off too (the orders still holding it drop it themselves), so
        neither a pick of free inventory nor a partner naming it finds it owned."""
        term: DomainTerm = self._at_version(event)
        cur.execute(
            "DELETE FROM order_domains WHERE tenant = ? AND domain = ?", (term.tenant, term.name)
        )

    @staticmethod
    def _released_by_failure(cur: Any, order: Order, order_id: str) -> None:
        """What a failure gave back (not bought by it, did not break it) is free again."""
        for given_back in order.domains:
            if given_back.get("status") != FAILED:
                cur.execute(
                    "UPDATE order_domains SET status = ? WHERE order_id = ? AND domain = ?",
                    (RELEASED_BY_FAILURE, order_id, given_back["domain"]),
                )

    @staticmethod
    def _domain_rows(
        cur: Any, order: Order, order_id: str, workspace_id: str | None, position: int
    ) -> None:
        for item in order.domains:
            cur.execute(
                "INSERT INTO order_domains (order_id, tenant, domain, dom_id, suite, kind, "
                "status, workspace_id, customer_id, position) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                # A name a swap took off this order and a later swap brought back is on it
                # again, as a new use of the name; the rows already on it stay as they are.
                "ON CONFLICT (order_id, domain) DO UPDATE SET dom_id = excluded.dom_id, "
                "suite = excluded.suite, status = excluded.status, position = excluded.position "
                f"WHERE order_domains.status = '{DETACHED_BY_SWAP}'",
                (
                    order_id,
                    order.tenant,
                    item["domain"],
                    item["id"],
                    item["suite"],
                    order.kind,
                    order.status,
                    workspace_id,
                    order.customer_id,
                    position,
                ),
            )

    @on(PendingAction.Opened, PendingAction.Resolved, PendingAction.Cancelled)
    def pending_changed(self, cur: Any, event: Any, position: int) -> None:
        action: PendingAction = self._at_version(event)
        doc = json_text(msgspec.to_builtins(pending_action_view(action)))
        cur.execute(
            "INSERT INTO pending_actions (id, tenant, position, order_id, status, doc) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET status = ?, doc = ?",
            (
                public_id("act", action.id),
                action.tenant,
                position,
                action.order_id,
                action.status,
                doc,
                action.status,
                doc,
            ),
        )


def domain_rows(cur: Any, tenant: str, domain: str) -> list[dict[str, Any]]:
    return list(
        cur.execute(
            "SELECT * FROM order_domains WHERE tenant = ? AND domain = ? ORDER BY position",
            (tenant, domain),
        ).fetchall()
    )


def inbox_addresses(cur: Any, order_ids: list[str], domain: str) -> list[str]:
    """The mailbox addresses these orders hold on `domain` (warm ones too), sorted."""
    if not order_ids:
        return []
    marks = ", ".join("?" for _ in order_ids)
    rows = cur.execute(f"SELECT doc FROM orders WHERE id IN ({marks})", tuple(order_ids))
    found: set[str] = set()
    for row in rows.fetchall():
        doc = msgspec.json.decode(row["doc"])
        # A premium swap's old domain keeps its inboxes while it is kept warm.
        for item in [*doc.get("domains", []), *doc.get("warm_domains", [])]:
            if item.get("domain") == domain:
                found.update(inbox["address"] for inbox in item.get("inboxes", []))
    return sorted(found)


# A row that counts for a domain's latest state: a purchase counts only once completed.
_COUNTS = "NOT ({t}.kind = 'purchase' AND {t}.status <> 'completed')"
_FREE_DOMAINS = (
    "SELECT d.domain, d.dom_id, d.kind, d.status, d.workspace_id, d.customer_id "
    # Unqualified, the columns are d's: the only table of this level.
    f"FROM order_domains d WHERE d.tenant = ? AND {CAN_BE_FREE} "
    "AND NOT EXISTS (SELECT 1 FROM order_domains n WHERE n.tenant = d.tenant "
    f"AND n.domain = d.domain AND n.position > d.position AND {_COUNTS.format(t='n')}) "
    "AND NOT EXISTS (SELECT 1 FROM order_domains b WHERE b.tenant = d.tenant "
    "AND b.domain = d.domain AND b.kind = 'order' AND b.status IN ({active})) "
    "AND (d.workspace_id IS NULL OR d.workspace_id = ? OR d.customer_id = ?) "
    # A domain its mail provider reported burned is never handed to a customer unasked.
    "AND NOT EXISTS (SELECT 1 FROM pool_domains p WHERE p.tenant = d.tenant "
    "AND p.name = d.domain AND p.burned) "
    # An imported domain whose nameservers do not point at us yet would hold the order up:
    # only a partner naming it takes it on (the order then waits in its dns step).
    "AND NOT EXISTS (SELECT 1 FROM domains x WHERE x.id = d.dom_id "
    "AND x.status = 'action_required') "
    "ORDER BY (SELECT MIN(f.position) FROM order_domains f WHERE f.tenant = d.tenant "
    f"AND f.domain = d.domain AND {_COUNTS.format(t='f')}), d.domain"
).format(active=", ".join(f"'{state}'" for state in ACTIVE_STATES))


def owned_free_domains(
    cur: Any, tenant: str, workspace_id: str | None, customer_id: str | None
) -> list[dict[str, Any]]:
    """Domains this tenant owns that no active order holds: bought by a completed purchase
    (for this workspace or customer, or for none), released by a cancelled order, or by a
    failed order it did not break. A domain that broke its order (or that the failed order
    was buying) shows `failed` in the inventory and is never picked on its own, nor is one its
    mail provider reported burned; the partner may still name either on an order. Oldest first.

    One query over the few rows that can be free (a partial index of them), not the tenant's
    whole order history: placement runs it on every order."""
    return list(cur.execute(_FREE_DOMAINS, (tenant, workspace_id, customer_id)).fetchall())
