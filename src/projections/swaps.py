"""Swaps as a read model: the `GET /swaps` list (filters `status`, `order_id`, `domain`, `type`)
and the swap worker's to-do list (sandbox swaps not yet run, live swaps due for a step, swaps
waiting on the partner, premium swaps whose old domain's warm period is over)."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from domain.swaps import Swap
from infra.database import Cursor
from infra.ids import public_id
from projections.base import ReadModel, on
from views.swaps import swap_view

SWAP_EVENTS = (
    Swap.Created,
    Swap.Started,
    Swap.StepCompleted,
    Swap.Completed,
    Swap.Failed,
    Swap.ActionRequired,
    Swap.Resumed,
    Swap.OldDomainDetached,
)


class SwapList(ReadModel):
    name = "swaps"
    tables = ("swaps",)
    ddl = (
        "CREATE TABLE IF NOT EXISTS swaps (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, "
        "position BIGINT NOT NULL, environment TEXT NOT NULL, kind TEXT NOT NULL, "
        "status TEXT NOT NULL, order_id TEXT NOT NULL, domain TEXT NOT NULL, new_domain TEXT, "
        "updated_at DOUBLE PRECISION NOT NULL, warm_until DOUBLE PRECISION, "
        "old_domain_detached BOOLEAN NOT NULL, doc TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS swaps_tenant ON swaps (tenant, position)",
        "CREATE INDEX IF NOT EXISTS swaps_status ON swaps (status)",
    )

    def attach(self, store: Any) -> None:
        self.store = store

    @on(*SWAP_EVENTS)
    def swap_changed(self, cur: Any, event: Any, position: int) -> None:
        swap: Swap = self.store.repository.get(
            event.originator_id, version=event.originator_version
        )
        view = swap_view(swap)
        cur.execute(
            "INSERT INTO swaps (id, tenant, position, environment, kind, status, order_id, "
            "domain, new_domain, updated_at, warm_until, old_domain_detached, doc) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
            "status = excluded.status, updated_at = excluded.updated_at, "
            "warm_until = excluded.warm_until, "
            "old_domain_detached = excluded.old_domain_detached, doc = excluded.doc",
            (
                public_id("swp", swap.id),
                swap.tenant,
                position,
                swap.environment,
                swap.kind,
                swap.status,
                swap.order_id,
                swap.domain,
                view.new_domain,
                swap.updated_at,
                swap.warm_until,
                swap.old_domain_detached_at is not None,
                # json.dumps text, as rows were stored before the view became a Struct: a
                # rebuilt row and one an older process wrote are the same text.
                json.dumps(msgspec.to_builtins(view)),
            ),
        )


def due_swaps(cur: Cursor, now: float, step_seconds: float, limit: int = 50) -> list[str]:
    """Sandbox swaps not yet run, and live swaps whose last move is at least one step old."""
    rows = cur.execute(
        "SELECT id FROM swaps WHERE status IN ('created', 'in_progress') "
        "AND (environment = 'test' OR updated_at <= ?) ORDER BY updated_at LIMIT ?",
        (now - step_seconds, limit),
    ).fetchall()
    return [str(r["id"]) for r in rows]


def waiting_swaps(cur: Cursor, limit: int = 50) -> list[str]:
    rows = cur.execute(
        "SELECT id FROM swaps WHERE status = 'action_required' ORDER BY position LIMIT ?",
        (limit,),
    ).fetchall()
    return [str(r["id"]) for r in rows]


def warm_periods_over(cur: Cursor, now: float, limit: int = 50) -> list[str]:
    rows = cur.execute(
        "SELECT id FROM swaps WHERE status = 'completed' AND warm_until IS NOT NULL "
        "AND warm_until <= ? AND old_domain_detached = ? ORDER BY warm_until LIMIT ?",
        (now, False, limit),
    ).fetchall()
    return [str(r["id"]) for r in rows]
