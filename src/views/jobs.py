"""How import and forwarding jobs look in responses, lists and webhooks (one shape each)."""

from __future__ import annotations

from typing import Any

from domain.forwarding import ForwardingJob
from domain.imports import ITEM_DONE, ITEM_FAILED, ImportJob
from infra.clock import iso
from infra.ids import public_id


def _iso(ts: float | None) -> str | None:
    return None if ts is None else iso(ts)


def import_view(job: ImportJob) -> dict[str, Any]:
    return {
        "id": public_id("imp", job.id),
        "status": job.status,
        "workspace_id": job.workspace_id,
        "submitted_count": len(job.items),
        "completed_count": sum(1 for i in job.items if i["status"] == ITEM_DONE),
        "failed_count": sum(1 for i in job.items if i["status"] == ITEM_FAILED),
        "nameserver_groups": job.nameserver_groups,
        "domains": [
            {
                "domain": i["domain"],
                "status": i["status"],
                "domain_id": i.get("dom_id"),
                "reason": i.get("reason"),
            }
            for i in job.items
        ],
        "created_at": _iso(job.created_at),
        "completed_at": _iso(job.completed_at),
    }


def forwarding_view(job: ForwardingJob) -> dict[str, Any]:
    return {
        "id": public_id("fwj", job.id),
        "status": job.status,
        "forwarding_url": job.forwarding_url,
        "completed": [d["domain"] for d in job.completed],
        "pending": [d["domain"] for d in job.pending],
        "failed": [d["domain"] for d in job.failed],
        "reason": job.reason,
        "created_at": _iso(job.created_at),
        "completed_at": _iso(job.completed_at),
    }
