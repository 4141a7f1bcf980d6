"""The domain worker role: advances open import jobs (re-checking nameservers until they are
pointed) and finishes forwarding jobs, in the order they were submitted.

Its to-do list is the `import_jobs` / `forwarding_jobs` read models; each pass loads the job,
decides, and saves with the aggregate's version check, so several workers (or a restarted one)
never apply a move twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from domain.events import event_names
from domain.forwarding import ForwardingJob
from domain.imports import ImportJob
from infra.polling import PollingWorker
from infra.sandbox_offsets import on_its_clock
from projections.domain_jobs import FORWARDING_JOB_EVENTS, IMPORT_JOB_EVENTS, open_jobs
from services.domains import forwarding, imports

if TYPE_CHECKING:
    from runtime.container import Container

# Waiting on nameservers is slow by nature; a new job wakes the worker at once (`wake_on`).
MIN_INTERVAL_SECONDS = 0.2


class DomainWorker(PollingWorker):
    thread_name = "domain-worker"
    name = "domains"
    wake_on = frozenset(event_names(*IMPORT_JOB_EVENTS, *FORWARDING_JOB_EVENTS))

    def __init__(self, container: Container) -> None:
        super().__init__(container, max(container.settings.poll_interval_seconds, MIN_INTERVAL_SECONDS))

    def run_once(self) -> None:
        with self.container.read_db.read() as cur:
            import_ids, forwarding_ids = open_jobs(cur)
        self.run_each(import_ids, on_its_clock("imp", ImportJob, imports.advance_job))
        self.run_each(forwarding_ids, on_its_clock("fwj", ForwardingJob, forwarding.finish_job))


    def describe(self) -> str:
        return f"domain imports and forwarding, every {self.interval:g}s"

