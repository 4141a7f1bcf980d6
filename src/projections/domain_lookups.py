"""What availability, imports, forwarding, purchases and orders ask of the domain inventory
read model (`projections.domains`): who holds a name, which suites use it, a tenant's rows."""

from __future__ import annotations

from typing import Any


def usage_by_name(cur: Any, names: list[str], tenant: str) -> dict[str, set[str]]:
    """The suites this tenant (organization and environment) currently uses each of these
    names for. Only its own: a name another organization holds is not available at all, and
    sandbox use is synthetic, so it never narrows what a live key may order (nor the reverse)."""
    found: dict[str, set[str]] = {name: set() for name in names}
    if not names:
        return found
    marks = ", ".join("?" for _ in names)
    for row in cur.execute(
        f"SELECT u.name, u.suite FROM domain_usage u WHERE u.name IN ({marks}) AND ("
        "EXISTS (SELECT 1 FROM orders o WHERE o.id = u.holder AND o.tenant = ?) OR "
        "EXISTS (SELECT 1 FROM domains d WHERE d.id = u.holder AND d.tenant = ?))",
        (*names, tenant, tenant),
    ).fetchall():
        found[row["name"]].add(row["suite"])
    return found


def owners_by_name(cur: Any, names: list[str], tenant: str | None = None) -> dict[str, set[str]]:
    """The tenants holding each of these names. Given the asking `tenant`, only those of its
    environment (sandbox holdings are synthetic: they never make a live name registered, nor
    the reverse). A failed row still holds its name: a bought domain whose later order failed
    stays its owner's."""
    found: dict[str, set[str]] = {name: set() for name in names}
    if not names:
        return found
    marks = ", ".join("?" for _ in names)
    sql = f"SELECT DISTINCT name, tenant FROM domains WHERE name IN ({marks})"
    params: list[Any] = list(names)
    if tenant is not None:
        sql += " AND tenant LIKE ?"
        params.append("%:" + tenant.rsplit(":", 1)[1])
    for row in cur.execute(sql, tuple(params)).fetchall():
        found[row["name"]].add(row["tenant"])
    return found


def tenant_rows_by_name(cur: Any, tenant: str, names: list[str]) -> list[dict[str, Any]]:
    if not names:
        return []
    marks = ", ".join("?" for _ in names)
    return list(
        cur.execute(
            f"SELECT * FROM domains WHERE tenant = ? AND name IN ({marks}) ORDER BY position",
            (tenant, *names),
        ).fetchall()
    )
