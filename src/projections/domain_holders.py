"""Who else holds a domain's name, for the domains read model, at the versions it applied.

One name may serve a suite_a order and a suite_b order at once (spec 2.5), and an imported
domain keeps its own state under the orders that use it. When one holder lets the name go,
the row shows the one that remains. That holder is loaded at the version of its last event this
model applied (kept in `domain_holder_versions`), never at its latest: a live follower may run
behind the log and an audit replay runs after all of it, and both must write the same row.
"""

from __future__ import annotations

from typing import Any

from domain.domains import Domain
from domain.orders import ACTIVE_STATES, DomainItem, Order
from infra.ids import parse_id

DDL = (
    "CREATE TABLE IF NOT EXISTS domain_holder_versions (holder TEXT PRIMARY KEY, "
    "version BIGINT NOT NULL)",
)
TABLE = "domain_holder_versions"


def record_version(cur: Any, holder: str, version: int) -> None:
    cur.execute(
        "INSERT INTO domain_holder_versions (holder, version) VALUES (?, ?) "
        "ON CONFLICT (holder) DO UPDATE SET version = excluded.version",
        (holder, version),
    )


def _applied(cur: Any, store: Any, holder: str, prefix: str, kind: type[Any]) -> Any | None:
    """The holder as this model last saw it, or None."""
    row = cur.execute(
        "SELECT version FROM domain_holder_versions WHERE holder = ?", (holder,)
    ).fetchone()
    aggregate_id = parse_id(prefix, holder)
    if row is None or aggregate_id is None:
        return None
    found = store.at_version(aggregate_id, int(row["version"]))
    return found if isinstance(found, kind) else None


def _named(order: Order, name: str) -> DomainItem | None:
    return next((i for i in [*order.domains, *order.warm_domains] if i["domain"] == name), None)


def other_active_holder(
    cur: Any, store: Any, leaving: str, tenant: str, name: str
) -> tuple[Order, DomainItem] | None:
    """Another active order of the tenant using the name, with its item of that name."""
    rows = cur.execute(
        "SELECT holder FROM domain_usage WHERE name = ? AND holder <> ? "
        "AND substr(holder, 1, 4) = 'ord_' ORDER BY holder",
        (name, leaving),
    ).fetchall()
    for row in rows:
        other = _applied(cur, store, row["holder"], "ord", Order)
        if other is None or other.tenant != tenant or other.status not in ACTIVE_STATES:
            continue
        item = _named(other, name)
        if item is not None:
            return other, item
    return None


def awaiting_nameservers(cur: Any, store: Any, item: DomainItem) -> Domain | None:
    """The imported Domain behind an order's item, when its nameservers still do not point
    at us (the import waits for the partner)."""
    if item.get("nameservers_since") is None:
        return None
    domain = _applied(cur, store, item["id"], "dom", Domain)
    return domain if domain is not None and domain.status == "action_required" else None
