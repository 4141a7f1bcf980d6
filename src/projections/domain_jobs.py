"""Import and forwarding jobs as read models: the import list (filters `status`, `domain`) and
the to-do list of open jobs the domain worker advances."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from domain.forwarding import ForwardingJob
from domain.imports import ImportJob
from infra.ids import public_id
from projections.base import ReadModel, on
from views.jobs import import_view

IMPORT_JOB_EVENTS = (ImportJob.Submitted, ImportJob.Progressed)
FORWARDING_JOB_EVENTS = (ForwardingJob.Submitted, ForwardingJob.Finished)


class DomainJobs(ReadModel):
    name = "domain_jobs"
    tables = ("import_jobs", "import_job_domains", "forwarding_jobs")
    ddl = (
        "CREATE TABLE IF NOT EXISTS import_jobs (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, "
        "position BIGINT NOT NULL, status TEXT NOT NULL, doc TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS import_jobs_tenant ON import_jobs (tenant, position)",
        "CREATE INDEX IF NOT EXISTS import_jobs_status ON import_jobs (status)",
        "CREATE TABLE IF NOT EXISTS import_job_domains (job_id TEXT NOT NULL, "
        "name TEXT NOT NULL, PRIMARY KEY (job_id, name))",
        "CREATE INDEX IF NOT EXISTS import_job_domains_name ON import_job_domains (name)",
        "CREATE TABLE IF NOT EXISTS forwarding_jobs (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, "
        "position BIGINT NOT NULL, status TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS forwarding_jobs_status ON forwarding_jobs (status)",
    )

    def attach(self, store: Any) -> None:
        self.store = store

    def _at_version(self, event: Any) -> Any:
        return self.store.repository.get(event.originator_id, version=event.originator_version)

    @on(*IMPORT_JOB_EVENTS)
    def import_changed(self, cur: Any, event: Any, position: int) -> None:
        job: ImportJob = self._at_version(event)
        job_id = public_id("imp", job.id)
        doc = json.dumps(msgspec.to_builtins(import_view(job)))
        cur.execute(
            "INSERT INTO import_jobs (id, tenant, position, status, doc) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (id) DO UPDATE SET status = excluded.status, doc = excluded.doc",
            (job_id, job.tenant, position, job.status, doc),
        )
        for item in job.items:
            cur.execute(
                "INSERT INTO import_job_domains (job_id, name) VALUES (?, ?) "
                "ON CONFLICT (job_id, name) DO NOTHING",
                (job_id, item["domain"]),
            )

    @on(*FORWARDING_JOB_EVENTS)
    def forwarding_changed(self, cur: Any, event: Any, position: int) -> None:
        job: ForwardingJob = self._at_version(event)
        cur.execute(
            "INSERT INTO forwarding_jobs (id, tenant, position, status) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (id) DO UPDATE SET status = excluded.status",
            (public_id("fwj", job.id), job.tenant, position, job.status),
        )
        # The finished job's domains get the URL in DomainInventory (`forwarding_finished`):
        # a model writes only its own tables, as the forked replay gives each process a share
        # of the models and only their tables.


def open_jobs(cur: Any, limit: int = 50) -> tuple[list[str], list[str]]:
    """Ids of import jobs and forwarding jobs that still have work to do."""
    imports = cur.execute(
        "SELECT id FROM import_jobs WHERE status IN ('in_progress', 'action_required') "
        "ORDER BY position LIMIT ?",
        (limit,),
    ).fetchall()
    forwards = cur.execute(
        "SELECT id FROM forwarding_jobs WHERE status = 'in_progress' ORDER BY position LIMIT ?",
        (limit,),
    ).fetchall()
    return [r["id"] for r in imports], [r["id"] for r in forwards]
