"""How a domain looks in responses, lists and webhooks (one shape), from its inventory row or
from the aggregate itself."""

from __future__ import annotations

import json
from typing import Any

from domain.domains import Domain, usable_for
from infra.clock import iso
from infra.ids import public_id


def _iso(ts: float | None) -> str | None:
    return None if ts is None else iso(ts)


def row_view(row: dict[str, Any], users: set[str]) -> dict[str, Any]:
    view: dict[str, Any] = {
        "id": row["id"],
        "domain": row["name"],
        "status": row["status"],
        "category": row["category"],
        "source": row["source"],
        "auto_renew": bool(row["auto_renew"]),
        "forwarding_url": row["forwarding_url"],
        "dns_records": json.loads(row["dns_records"]),
        "created_at": _iso(row["created_at"]),
        "updated_at": _iso(row["updated_at"]),
    }
    if row["reason"]:
        view["reason"] = row["reason"]
    if row["category"] == "connected":
        view.update(
            provider=row["provider"],
            suite=row["suite"],
            customer_id=row["customer_id"],
            order_id=row["order_id"],
            workspace_id=row["workspace_id"],
            usable_for=usable_for(users),
        )
    return view



def aggregate_view(domain: Domain, users: set[str] | None = None) -> dict[str, Any]:
    """The row of a Domain built from the aggregate itself (webhooks, consistent reads)."""
    row = {
        "id": public_id("dom", domain.id),
        "name": domain.name,
        "status": domain.status,
        "category": domain.category,
        "source": domain.source,
        "auto_renew": domain.auto_renew,
        "forwarding_url": domain.forwarding_url,
        "dns_records": json.dumps(domain.dns_records),
        "created_at": domain.created_at,
        "updated_at": domain.updated_at,
        "reason": domain.reason,
        "provider": domain.provider,
        "suite": domain.suite,
        "customer_id": domain.customer_id,
        "order_id": domain.order_id,
        "workspace_id": domain.workspace_id,
    }
    fallback = {domain.suite} if domain.suite and domain.order_id else set()
    return row_view(row, users if users is not None else fallback)
