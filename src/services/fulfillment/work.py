"""The fulfillment team's work: orders being provisioned, waiting for the partner or being
cancelled, read from the `fulfillment_work` read model.

Stuck means no progress (no event on the order) for longer than a threshold, measured on the
service clock, so tests move time by hand instead of waiting.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import msgspec

from domain.errors import invalid
from domain.orders import BUSY_STATES
from infra.ids import parse_id
from services.fulfillment.commands import ListWork, StreamWork
from views.fulfillment_work import OrderWork, WorkItem, WorkList

if TYPE_CHECKING:
    from infra.database import Row
    from runtime.container import Container

MIN_STUCK_SECONDS = 60.0
STEPS_BEFORE_STUCK = 10
BATCH = 500


def stuck_threshold(container: Container, requested: float) -> float:
    if not math.isfinite(requested) or requested < 0:  # NaN would turn stuck detection off
        raise invalid(
            "stuck_after_seconds must be a finite number, not negative.", "stuck_after_seconds"
        )
    if requested:
        return float(requested)
    step = container.settings.fulfillment_step_seconds
    return float(max(MIN_STUCK_SECONDS, STEPS_BEFORE_STUCK * step))


def _check_org(org_id: str) -> None:
    if org_id and parse_id("org", org_id) is None:
        raise invalid("org_id must be an org_ id.", "org_id")


def _item(row: Row, now: float, threshold: float) -> WorkItem:
    """A read-model row (a DB cursor's row) as work read at `now`."""
    work = msgspec.json.decode(row["doc"], type=OrderWork)
    idle = max(0.0, now - float(row["updated_at"]))
    busy = row["status"] in BUSY_STATES
    return WorkItem(
        **msgspec.structs.asdict(work),
        idle_seconds=idle,
        stuck=busy and idle > threshold,
        position=row["position"],
    )


def list_work(container: Container, query: ListWork) -> WorkList:
    """Busy orders, longest idle first; with `stuck_only`, only those idle past the threshold."""
    org_id = query.org_id
    _check_org(org_id)
    threshold = stuck_threshold(container, query.stuck_after_seconds)
    now = container.clock.now()
    marks = ", ".join("?" for _ in BUSY_STATES)
    sql = f"SELECT * FROM fulfillment_work WHERE status IN ({marks})"
    params: list[object] = list(BUSY_STATES)
    if query.stuck_only:
        sql += " AND updated_at < ?"
        params.append(now - threshold)
    if org_id:
        sql += " AND org_id = ?"
        params.append(org_id)
    with container.read_db.read() as cur:
        rows = cur.execute(sql + " ORDER BY updated_at, order_id", tuple(params)).fetchall()
    items = [_item(row, now, threshold) for row in rows]
    return WorkList(stuck_after_seconds=threshold, items=items)


def work_changes(
    container: Container, query: StreamWork, after: int
) -> tuple[list[WorkItem], int]:
    """Work items changed after read-model position `after` (final statuses included), and the
    position reached."""
    org_id = query.org_id
    _check_org(org_id)
    threshold = stuck_threshold(container, query.stuck_after_seconds)
    sql = "SELECT * FROM fulfillment_work WHERE position > ?"
    params: list[object] = [after]
    if org_id:
        sql += " AND org_id = ?"
        params.append(org_id)
    with container.read_db.read() as cur:
        rows = cur.execute(sql + f" ORDER BY position LIMIT {BATCH}", tuple(params)).fetchall()
    now = container.clock.now()
    reached = int(rows[-1]["position"]) if rows else after
    return [_item(row, now, threshold) for row in rows], reached


def work_position(container: Container) -> int:
    with container.read_db.read() as cur:
        row = cur.execute("SELECT MAX(position) AS top FROM fulfillment_work").fetchone()
    return int(row["top"] or 0) if row else 0
