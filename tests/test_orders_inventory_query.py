"""The inventory query placement runs on every order gives what the plain rule gives, on both
stores, for random histories of orders and purchases."""

from __future__ import annotations

import random
from typing import Any

from domain.orders import ACTIVE_STATES
from infra.database import Database, PostgresDatabase, SQLiteDatabase
from infra.settings import Settings
from projections.domains import DomainInventory
from projections.orders import OrderList, owned_free_domains
from projections.pool import PoolReadModel

STATUSES = ["in_progress", "completed", "failed", "action_required", "cancel_scheduled",
            "cancelled"]


def plain_rule(rows: list[dict[str, Any]], workspace_id: str | None, customer_id: str | None
               ) -> set[str]:
    """The rule as the spec reads: the domain's latest counted row decides, an active order
    anywhere in its history holds it; a burned one (d7.com in these histories) is never free."""
    latest: dict[str, dict[str, Any]] = {}
    busy: set[str] = set()
    for row in sorted(rows, key=lambda r: r["position"]):
        if row["kind"] == "order" and row["status"] in ACTIVE_STATES:
            busy.add(row["domain"])
        if row["kind"] == "purchase" and row["status"] != "completed":
            continue
        latest[row["domain"]] = row
    return {
        name for name, row in latest.items()
        if name not in busy and name != "d7.com" and not (row["kind"] == "order" and row["status"] == "failed")
        and (row["workspace_id"] in (None, workspace_id)
             or (customer_id is not None and row["customer_id"] == customer_id))
    }


def random_history(rng: random.Random, tenant: str) -> list[dict[str, Any]]:
    rows = []
    for position in range(1, rng.randint(1, 40)):
        for number in rng.sample(range(8), rng.randint(1, 3)):
            rows.append({
                "order_id": f"ord_{tenant}_{position}", "tenant": tenant, "domain": f"d{number}.com",
                "dom_id": f"dom_{number}", "suite": "suite_a",
                "kind": rng.choice(["order", "purchase"]), "status": rng.choice(STATUSES),
                "workspace_id": rng.choice([None, "wrk_1", "wrk_2"]),
                "customer_id": rng.choice([None, "c1", "c2"]), "position": position,
            })
    return rows


def _database(settings: Settings) -> Database:
    if settings.database_url:
        return PostgresDatabase(settings.database_url, settings.database_schema)
    return SQLiteDatabase(settings.data_dir / "read.sqlite")


def test_free_inventory_query_matches_the_plain_rule(settings: Settings) -> None:
    db = _database(settings)
    try:
        with db.transaction() as cur:
            OrderList().create_tables(cur)
            DomainInventory().create_tables(cur)  # the query skips domains awaiting nameservers
            PoolReadModel().create_tables(cur)  # ... and burned ones
        rng = random.Random(7)
        for round_ in range(60):
            tenant = f"org_{round_}:test"
            rows = random_history(rng, tenant)
            with db.transaction() as cur:
                for row in rows:
                    cur.execute(
                        f"INSERT INTO order_domains ({', '.join(row)}) "
                        f"VALUES ({', '.join('?' * len(row))})", list(row.values()),
                    )
                # Its mail provider reported d7.com burned: never free, whatever its rows say.
                cur.execute(
                    "INSERT INTO pool_domains (key, position, tenant, name, dom_id, condition, "
                    "burned, doc) VALUES (?, 1, ?, 'd7.com', 'dom_7', 'removed', ?, '{}')",
                    (tenant, tenant, True),
                )
            for workspace_id, customer_id in [(None, None), ("wrk_1", None), ("wrk_2", "c1")]:
                with db.read() as cur:
                    found = owned_free_domains(cur, tenant, workspace_id, customer_id)
                assert {r["domain"] for r in found} == plain_rule(rows, workspace_id, customer_id)
                assert len(found) == len({r["domain"] for r in found})
    finally:
        db.close()


def test_free_inventory_is_read_from_the_rows_that_can_be_free(settings: Settings) -> None:
    """Placement runs the query on every order: it must read the few rows that can be free,
    not every completed order of the tenant, however long its history (and before the
    store's planner statistics caught up with it)."""
    from projections.orders import _FREE_DOMAINS

    db = _database(settings)
    try:
        with db.transaction() as cur:
            OrderList().create_tables(cur)
            DomainInventory().create_tables(cur)
            PoolReadModel().create_tables(cur)
            for number in range(3000):
                cur.execute(
                    "INSERT INTO order_domains (order_id, tenant, domain, dom_id, suite, kind, "
                    "status, position) VALUES (?, 'org_1:test', ?, ?, 'suite_a', 'order', "
                    "'completed', ?)",
                    (f"ord_{number}", f"d{number}.com", f"dom_{number}", number),
                )
        explain = "EXPLAIN " if db.dialect == "postgres" else "EXPLAIN QUERY PLAN "
        with db.read() as cur:
            plan = " ".join(
                str(value) for row in cur.execute(
                    explain + _FREE_DOMAINS, ("org_1:test", None, None)).fetchall()
                for value in row.values()
            )
        assert "order_domains_free_or_detached" in plan, plan
    finally:
        db.close()
