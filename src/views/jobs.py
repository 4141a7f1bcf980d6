"""How import and forwarding jobs look in responses, lists and webhooks (one shape each)."""

from __future__ import annotations

from typing import Literal, cast

import msgspec

from domain.forwarding import ForwardingJob
from domain.imports import ITEM_DONE, ITEM_FAILED, ImportJob
from infra.clock import iso
from infra.ids import public_id
from schema.vocabulary import ImportItemStatus, ImportJobStatus
from views.pages import Links, Meta

ForwardingJobStatus = Literal["in_progress", "completed", "failed"]


class NameserverGroup(msgspec.Struct):
    """The nameservers the customer sets at their registrar for these domains."""

    nameserver_one: str
    nameserver_two: str
    domains: list[str]


class ImportItem(msgspec.Struct):
    domain: str
    status: ImportItemStatus
    domain_id: str | None  # the `dom_` id once the domain is in the inventory
    reason: str | None


class ImportJobOut(msgspec.Struct):
    """An import job (spec 2.6)."""

    id: str
    status: ImportJobStatus
    workspace_id: str | None
    submitted_count: int
    completed_count: int
    failed_count: int
    nameserver_groups: list[NameserverGroup]
    domains: list[ImportItem]
    created_at: str
    completed_at: str | None


class ImportJobResponse(msgspec.Struct):
    data: ImportJobOut


class ImportJobList(msgspec.Struct):
    data: list[ImportJobOut]
    links: Links
    meta: Meta


class ForwardingJobOut(msgspec.Struct):
    """A forwarding job (`fwj_`); the domain lists hold names."""

    id: str
    status: ForwardingJobStatus
    forwarding_url: str
    completed: list[str]
    pending: list[str]
    failed: list[str]
    reason: str | None
    created_at: str
    completed_at: str | None


class ForwardingJobResponse(msgspec.Struct):
    data: ForwardingJobOut


def _iso(ts: float | None) -> str | None:
    return None if ts is None else iso(ts)


def import_view(job: ImportJob) -> ImportJobOut:
    return ImportJobOut(
        id=public_id("imp", job.id),
        status=cast(ImportJobStatus, job.status),
        workspace_id=job.workspace_id,
        submitted_count=len(job.items),
        completed_count=sum(1 for i in job.items if i["status"] == ITEM_DONE),
        failed_count=sum(1 for i in job.items if i["status"] == ITEM_FAILED),
        nameserver_groups=[
            NameserverGroup(
                nameserver_one=g["nameserver_one"],
                nameserver_two=g["nameserver_two"],
                domains=g["domains"],
            )
            for g in job.nameserver_groups
        ],
        domains=[
            ImportItem(
                domain=i["domain"],
                status=i["status"],
                domain_id=i.get("dom_id"),
                reason=i.get("reason"),
            )
            for i in job.items
        ],
        created_at=iso(job.created_at),
        completed_at=_iso(job.completed_at),
    )


def forwarding_view(job: ForwardingJob) -> ForwardingJobOut:
    return ForwardingJobOut(
        id=public_id("fwj", job.id),
        status=cast(ForwardingJobStatus, job.status),
        forwarding_url=job.forwarding_url,
        completed=[d["domain"] for d in job.completed],
        pending=[d["domain"] for d in job.pending],
        failed=[d["domain"] for d in job.failed],
        reason=job.reason,
        created_at=iso(job.created_at),
        completed_at=_iso(job.completed_at),
    )
