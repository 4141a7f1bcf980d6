"""Domain inventory and who uses each name, as read models.

`domains` has one row per `dom_` id, whether the domain lives as its own aggregate (imports,
swaps, pool) or as an item of an order (orders and purchases keep their domains inside
the order). `domain_usage` has one row per (holder, name) for every suite currently using a
name anywhere in the system: an active order's items, or an attached Domain. Availability
and `usable_for` read these two tables only.

Positions are the notification id times 1000 plus the item's index, so rows that one event
creates still page in a stable order. The queries other layers make of these tables are in
`projections.domain_lookups`.
"""

from __future__ import annotations

import json
from typing import Any

from domain.domain_terms import LAPSED, PAYMENT_FAILED, DomainTerm
from domain.domains import Domain, listed_source
from domain.forwarding import ForwardingJob
from domain.orders import ACTIVE_STATES, PURCHASE, DomainItem, Order, shown_item_status
from domain.pool_domains import PoolDomain
from domain.pool_replacements import PoolReplacement
from infra.ids import public_id
from projections import domain_holders as holders
from projections.base import ReadModel, on
from projections.domain_reasons import row_reason
from projections.swap_holds import SwapHolds

REPLACEMENT_NEEDED = "replacement_needed"
TERM_EVENTS = (
    DomainTerm.Started,
    DomainTerm.AutoRenewSet,
    DomainTerm.Renewed,
    DomainTerm.RenewalPaymentFailed,
    DomainTerm.Lapsed,
)
DOMAIN_EVENTS = (
    Domain.Registered,
    Domain.Attached,
    Domain.Connected,
    Domain.ActionRequired,
    Domain.NameserversPointed,
    Domain.Failed,
    Domain.Released,
    Domain.ForwardingUpdated,
)
ORDER_EVENTS = (
    Order.Placed,
    Order.StepCompleted,
    Order.Completed,
    Order.Failed,
    Order.ActionRequired,
    Order.Resumed,
    Order.CancelScheduled,
    Order.Cancelled,
    Order.DomainSwapped,
    Order.WarmDomainDetached,
    Order.DomainLapsed,
    Order.InboxesRenamed,
)
_COLUMNS = (
    "tenant, name, status, category, source, suite, provider, order_id, customer_id, "
    "workspace_id, forwarding_url, auto_renew, reason, dns_records, created_at, updated_at"
)
_UPSERT = (
    f"INSERT INTO domains (id, position, {_COLUMNS}) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (id) DO UPDATE SET status = excluded.status, category = excluded.category, "
    "suite = excluded.suite, provider = excluded.provider, order_id = excluded.order_id, "
    "customer_id = excluded.customer_id, workspace_id = excluded.workspace_id, "
    "forwarding_url = COALESCE(excluded.forwarding_url, domains.forwarding_url), "
    # A PATCH's choice (the domain's term) outlives the orders that later rewrite the row.
    "auto_renew = COALESCE((SELECT t.auto_renew FROM domain_terms t WHERE t.id = excluded.id), "
    "excluded.auto_renew), reason = excluded.reason, "
    "dns_records = CASE WHEN excluded.dns_records = '[]' THEN domains.dns_records "
    "ELSE excluded.dns_records END, updated_at = excluded.updated_at"
)


def _order_item_status(order: Order, item: DomainItem) -> tuple[str, str]:
    """(status, category) of one order item as the inventory shows it."""
    if order.kind == PURCHASE:
        status = {"completed": "available", "cancelled": "available"}.get(order.status)
        return status or ("failed" if order.status == "failed" else "in_progress"), "inventory"
    if order.status not in ACTIVE_STATES:
        # A failed order fails what it was buying and what broke it, not what it borrowed.
        failed = order.status == "failed" and item.get("status") == "failed"
        return ("failed" if failed else "available"), "inventory"
    return shown_item_status(order.items_shown_as, item), "connected"


def _usage(order: Order) -> list[tuple[str, str]]:
    """(name, suite) of each name an active order holds for a suite, in the order's order."""
    if order.kind == PURCHASE or order.status not in ACTIVE_STATES:
        return []
    return [(item["domain"], suite) for item in order.held_items if (suite := item.get("suite"))]


class DomainInventory(SwapHolds, ReadModel):
    name = "domains"
    tables = ("domains", "domain_usage", holders.TABLE, "domain_terms")
    ddl = (
        "CREATE TABLE IF NOT EXISTS domains (id TEXT PRIMARY KEY, position BIGINT NOT NULL, "
        "tenant TEXT NOT NULL, name TEXT NOT NULL, status TEXT NOT NULL, category TEXT NOT NULL, "
        "source TEXT NOT NULL, suite TEXT, provider TEXT, order_id TEXT, customer_id TEXT, "
        "workspace_id TEXT, forwarding_url TEXT, auto_renew BOOLEAN NOT NULL, reason TEXT, "
        "dns_records TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL, "
        "updated_at DOUBLE PRECISION NOT NULL)",
        "CREATE INDEX IF NOT EXISTS domains_tenant ON domains (tenant, position)",
        "CREATE INDEX IF NOT EXISTS domains_name ON domains (name)",
        "CREATE TABLE IF NOT EXISTS domain_usage (holder TEXT NOT NULL, name TEXT NOT NULL, "
        "suite TEXT NOT NULL, PRIMARY KEY (holder, name))",
        "CREATE INDEX IF NOT EXISTS domain_usage_name ON domain_usage (name)",
        "CREATE TABLE IF NOT EXISTS domain_terms (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, "
        "auto_renew BOOLEAN NOT NULL, status TEXT NOT NULL, due_at DOUBLE PRECISION)",
        *holders.DDL,
    )

    def attach(self, store: Any) -> None:
        self.store = store

    def _at_version(self, event: Any) -> Any:
        return self.store.at_version(event.originator_id, event.originator_version)

    @staticmethod
    def _row_order_id(cur: Any, dom_id: str) -> str | None:
        """The order the domain's row is connected to, if any."""
        row = cur.execute("SELECT order_id FROM domains WHERE id = ?", (dom_id,)).fetchone()
        return None if row is None else row["order_id"]

    @on(*DOMAIN_EVENTS)
    def domain_changed(self, cur: Any, event: Any, position: int) -> None:
        domain: Domain = self._at_version(event)
        dom_id = public_id("dom", domain.id)
        holders.record_version(cur, dom_id, event.originator_version)
        if domain.order_id is None and self._row_order_id(cur, dom_id) is not None:
            # An order named this imported domain: its row follows the order now, and the
            # Domain aggregate only contributes what it still owns (forwarding).
            cur.execute(
                "UPDATE domains SET forwarding_url = ?, updated_at = ? WHERE id = ?",
                (domain.forwarding_url, domain.updated_at, dom_id),
            )
            return
        self._upsert_domain(cur, domain, position * 1000)
        if type(event) is Domain.ForwardingUpdated and domain.forwarding_url is None:
            cur.execute("UPDATE domains SET forwarding_url = NULL WHERE id = ?", (dom_id,))
        cur.execute("DELETE FROM domain_usage WHERE holder = ?", (dom_id,))
        if domain.order_id is not None and domain.suite is not None:
            cur.execute(
                "INSERT INTO domain_usage (holder, name, suite) VALUES (?, ?, ?)",
                (dom_id, domain.name, domain.suite),
            )

    @on(*ORDER_EVENTS)
    def order_changed(self, cur: Any, event: Any, position: int) -> None:
        order: Order = self._at_version(event)
        order_id = public_id("ord", order.id)
        # A premium swap's old domain stays connected, like the order's own, until detached.
        held = order.held_items
        holders.record_version(cur, order_id, event.originator_version)
        # A domain a swap brings in was registered then (its row is new): its renewal
        # anniversary is the swap's, not the order's. Rows that exist keep their created_at.
        swapped_in = type(event) is Order.DomainSwapped
        bought_at = getattr(event, "at", None) if swapped_in else None
        # A lapse takes one name off the order (its row goes with its term); the others are
        # as they were, `updated_at` included.
        unchanged = type(event) is Order.DomainLapsed
        for index, item in enumerate([] if unchanged else held):
            if order.kind != PURCHASE and order.status not in ACTIVE_STATES:
                self._released(cur, order, item, position * 1000 + index)
            elif order.kind == PURCHASE and self._row_order_id(cur, item["id"]) not in (None, order_id):
                continue  # a later order took it: its row follows that order now
            else:
                self._upsert_item(cur, order, item, position * 1000 + index, bought_at)
        detached = getattr(event, "detached_domain", None)
        if detached is not None:
            self._released(cur, order, detached, position * 1000 + len(held), swapped=True)
        if type(event) is Order.Cancelled:
            for item in unregistered_at_cancel(self.store, event):
                cur.execute("DELETE FROM domains WHERE id = ?", (item["id"],))
        self._record_usage(cur, order_id, order, event)

    def _record_usage(self, cur: Any, order_id: str, order: Order, event: Any) -> None:
        """The names the order uses, rewritten only when they changed: most of an order's
        events (its completion, say) leave them as they were. The version before is looked
        at only if it was built here already: rebuilding it would cost more than the rewrite."""
        usage = _usage(order)
        before = self.store.built_version(event.originator_id, event.originator_version - 1)
        if before is not None and _usage(before) == usage:
            return
        cur.execute("DELETE FROM domain_usage WHERE holder = ?", (order_id,))
        for name, suite in usage:
            cur.execute(
                "INSERT INTO domain_usage (holder, name, suite) VALUES (?, ?, ?) "
                "ON CONFLICT (holder, name) DO NOTHING",
                (order_id, name, suite),
            )

    def _released(
        self, cur: Any, order: Order, item: DomainItem, row_position: int, swapped: bool = False
    ) -> None:
        """The order let the domain go (cancelled, failed, swapped out). A name another active
        order still uses stays connected to it; an import still waiting for its nameservers
        shows that again; anything else is inventory."""
        other = holders.other_active_holder(
            cur, self.store, public_id("ord", order.id), order.tenant, item["domain"]
        )
        if other is not None:
            holder, held = other
            self._upsert_item(cur, holder, {**held, "id": item["id"]}, row_position)
        elif (awaiting := holders.awaiting_nameservers(cur, self.store, item)) is not None:
            self._upsert_domain(cur, awaiting, row_position)
        elif swapped:
            self._detached(cur, order, item, row_position)
        else:
            self._upsert_item(cur, order, item, row_position)

    @staticmethod
    def _upsert_domain(cur: Any, domain: Domain, row_position: int) -> None:
        cur.execute(
            _UPSERT,
            (
                public_id("dom", domain.id),
                row_position,
                domain.tenant,
                domain.name,
                domain.status,
                domain.category,
                domain.source,
                domain.suite,
                domain.provider,
                domain.order_id,
                domain.customer_id,
                domain.workspace_id,
                domain.forwarding_url,
                domain.auto_renew,
                domain.reason,
                json.dumps(domain.dns_records),
                domain.created_at,
                domain.updated_at,
            ),
        )

    def _upsert_item(
        self,
        cur: Any,
        order: Order,
        item: DomainItem,
        row_position: int,
        created_at: float | None = None,
    ) -> None:
        status, category = _order_item_status(order, item)
        if item.get("shared_with") and status in ("in_progress", "action_required"):
            return  # live on the completed orders that use it: the row stays theirs meanwhile
        connected = category == "connected"
        workspace_id = order.destination["workspace_id"] if order.destination else None
        cur.execute(
            _UPSERT,
            (
                item["id"],
                row_position,
                order.tenant,
                item["domain"],
                status,
                category,
                listed_source(item),
                item.get("suite") if connected else None,
                item.get("suite") if connected else None,
                public_id("ord", order.id) if connected else None,
                order.customer_id if connected else None,
                workspace_id if connected else None,
                item.get("forwarding_url"),
                bool(item.get("auto_renew", True)),
                row_reason(self.store, order, item, status),
                json.dumps(item.get("dns_records") or []),
                order.created_at if created_at is None else created_at,
                order.updated_at,
            ),
        )

    @on(*TERM_EVENTS)
    def term_changed(self, cur: Any, event: Any, position: int) -> None:
        """A bought domain's term: its auto_renew choice, a renewal the wallet could not cover
        (`action_required` until paid), its lapse (the row leaves inventory)."""
        term: DomainTerm = self._at_version(event)
        cur.execute(
            "INSERT INTO domain_terms (id, tenant, auto_renew, status, due_at) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (id) DO UPDATE SET auto_renew = excluded.auto_renew, "
            "status = excluded.status, due_at = excluded.due_at",
            (term.dom_id, term.tenant, term.auto_renew, term.status, term.due_at),
        )
        if term.status == LAPSED:
            cur.execute("DELETE FROM domains WHERE id = ?", (term.dom_id,))
            cur.execute("DELETE FROM domain_usage WHERE holder = ?", (term.dom_id,))
            return
        cur.execute(
            "UPDATE domains SET auto_renew = ? WHERE id = ?", (term.auto_renew, term.dom_id)
        )
        at = getattr(event, "at", None)
        if at is None:  # started: nothing moved yet
            return
        if isinstance(event, (DomainTerm.AutoRenewSet, DomainTerm.Renewed)):
            cur.execute("UPDATE domains SET updated_at = ? WHERE id = ?", (at, term.dom_id))
        if term.status == PAYMENT_FAILED:
            cur.execute(
                "UPDATE domains SET status = 'action_required', reason = ?, updated_at = ? "
                "WHERE id = ?",
                (PAYMENT_FAILED, at, term.dom_id),
            )
        else:  # paid after all: as it was before
            cur.execute(
                "UPDATE domains SET status = CASE WHEN category = 'connected' THEN 'active' "
                "ELSE 'available' END, reason = NULL, updated_at = ? WHERE id = ? AND reason = ?",
                (at, term.dom_id, PAYMENT_FAILED),
            )

    @on(Order.DomainForwardingSet)
    def order_forwarding_set(self, cur: Any, event: Any, position: int) -> None:
        """Only the named rows: an older order (cancelled, a purchase) may list other domains
        that another order holds now, and must not rewrite their rows."""
        ids = list(event.domain_ids)
        marks = ", ".join("?" for _ in ids)
        cur.execute(
            f"UPDATE domains SET forwarding_url = ?, updated_at = ? WHERE id IN ({marks})",
            (event.forwarding_url, event.at, *ids),
        )

    @on(ForwardingJob.Finished)
    def forwarding_finished(self, cur: Any, event: Any, position: int) -> None:
        """Every domain the job completed forwards to its URL, including one no Domain or
        Order event covers (a domain a swap took off its order)."""
        job: ForwardingJob = self._at_version(event)
        if job.status != "completed":
            return
        for item in job.completed:
            cur.execute(
                "UPDATE domains SET forwarding_url = ?, updated_at = ? WHERE id = ?",
                (job.forwarding_url, job.updated_at, item["id"]),
            )

    @on(PoolReplacement.Finished)
    def replacement_finished(self, cur: Any, event: Any, position: int) -> None:
        """A burned domain that no pool domain could replace needs the partner (spec 6:
        `domain.action_required`, "replacement needed")."""
        if event.status == "failed":
            cur.execute(
                "UPDATE domains SET status = 'action_required', reason = ?, updated_at = ? "
                "WHERE id = ?",
                (REPLACEMENT_NEEDED, event.at, event.burned_domain["id"]),
            )
        else:  # replaced after all: the row is as it was before it needed one
            cur.execute(
                "UPDATE domains SET status = 'active', reason = NULL, updated_at = ? "
                "WHERE id = ? AND reason = ?",
                (event.at, event.burned_domain["id"], REPLACEMENT_NEEDED),
            )

    @on(PoolDomain.Released)
    def burned_domain_released(self, cur: Any, event: Any, position: int) -> None:
        """The partner's answer to `replacement_needed`: the burned domain is out of the pool
        and, on its own order still, needs nothing more."""
        pooled = self._at_version(event)
        if pooled.released_awaiting_replacement and pooled.dom_id:
            cur.execute(
                "UPDATE domains SET status = 'active', reason = NULL, updated_at = ? "
                "WHERE id = ? AND reason = ?",
                (event.at, pooled.dom_id, REPLACEMENT_NEEDED),
            )

    @staticmethod
    def _detached(cur: Any, order: Order, item: DomainItem, position: int) -> None:
        """A swap took the domain off the order: inventory again, free of any suite."""
        cur.execute(
            _UPSERT,
            (
                item["id"],
                position,
                order.tenant,
                item["domain"],
                "available",
                "inventory",
                listed_source(item),
                None,
                None,
                None,
                None,
                None,
                item.get("forwarding_url"),
                bool(item.get("auto_renew", True)),
                None,
                json.dumps(item.get("dns_records") or []),
                order.created_at,
                order.updated_at,
            ),
        )


def unregistered_at_cancel(store: Any, event: Any) -> list[DomainItem]:
    """The items a cancellation dropped: domains the order had not registered yet, which were
    never the organization's (`services.orders.use_cases.finalize_cancel`)."""
    before: Order = store.at_version(event.originator_id, event.originator_version - 1)
    # What this event itself left out: a cancellation saved before the rule kept every item.
    kept = {item["id"] for item in event.domains}
    return [item for item in before.domains if item["id"] not in kept]
