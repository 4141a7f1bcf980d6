"""How pool domains and pool jobs look in responses, lists and webhooks (one shape each)."""

from __future__ import annotations

from typing import Any

from domain.burned_domain_jobs import BurnedDomainJob
from domain.pool_domains import PoolDomain
from domain.pool_releases import PoolRelease
from domain.pool_replacements import PoolReplacement
from domain.pool_reservations import PoolReservation
from infra.clock import iso
from infra.ids import public_id


def _iso(ts: float | None) -> str | None:
    return None if ts is None else iso(ts)


def pool_domain_view(domain: PoolDomain, now: float) -> dict[str, Any]:
    condition = domain.condition_at(now)
    return {
        "id": domain.dom_id,
        "domain": domain.name,
        "condition": condition,
        "available_at": _iso(domain.available_at) if condition != "available" else None,
        "order_id": domain.order_id,
        "inbox_count": domain.inbox_count,
        "reservation_id": domain.reservation_id,
        "workspace_id": domain.workspace_id,
        "client_id": domain.client_id,
        "burned": domain.burned,
        "added_at": _iso(domain.added_at),
        "updated_at": _iso(domain.updated_at),
    }


def reservation_view(reservation: PoolReservation) -> dict[str, Any]:
    return {
        "id": public_id("pcl", reservation.id),
        "status": reservation.status,
        "workspace_id": reservation.workspace_id,
        "client_id": reservation.client_id,
        "quantity": reservation.quantity,
        "domains": reservation.domains,
        "reason": reservation.reason,
        "created_at": _iso(reservation.created_at),
        "completed_at": _iso(reservation.completed_at),
    }


def release_view(release: PoolRelease) -> dict[str, Any]:
    return {
        "id": public_id("prl", release.id),
        "status": release.status,
        "domains": release.domains,
        "created_at": _iso(release.created_at),
        "completed_at": _iso(release.completed_at),
    }


def replacement_view(replacement: PoolReplacement) -> dict[str, Any]:
    return {
        "id": public_id("prp", replacement.id),
        "status": replacement.status,
        "job_id": replacement.job_id,
        "workspace_id": replacement.workspace_id,
        "client_id": replacement.client_id,
        "burned_domain": replacement.burned_domain,
        "replacement_domain": replacement.replacement_domain,
        "reason": replacement.reason,
        "created_at": _iso(replacement.created_at),
        "completed_at": _iso(replacement.completed_at),
    }


def burned_job_view(job: BurnedDomainJob) -> dict[str, Any]:
    return {
        "id": public_id("brj", job.id),
        "status": job.status,
        "domain": job.domain,
        "operator": job.operator,
        "reason": job.reason,
        "pool_condition": job.pool_condition,
        "replacement_id": job.replacement_id,
        "created_at": _iso(job.created_at),
        "completed_at": _iso(job.completed_at),
    }
