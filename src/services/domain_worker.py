"""The domain worker role: advances open import jobs (re-checking nameservers until they are
pointed) and finishes live forwarding jobs.

Its to-do list is the `import_jobs` / `forwarding_jobs` read models; each pass loads the job,
decides, and saves with the aggregate's version check, so several workers (or a restarted one)
never apply a move twice.
"""

from __future__ import annotations

import logging
import threading

import anyio

from projections.domain_jobs import open_jobs
from runtime.container import Container
from runtime.roles import register_role
from services import forwarding, imports

log = logging.getLogger(__name__)
# Waiting on nameservers is slow by nature; a quick pass on every save covers new jobs.
MIN_INTERVAL_SECONDS = 0.2


class DomainWorker:
    name = "domains"

    def __init__(self, container: Container) -> None:
        self.container = container
        self.interval = max(container.settings.poll_interval_seconds, MIN_INTERVAL_SECONDS)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        container.store.on_saved(lambda _id: self._wake.set())

    def run_once(self) -> None:
        with self.container.read_db.read() as cur:
            import_ids, forwarding_ids = open_jobs(cur)
        for job_id in import_ids:
            imports.advance_job(self.container, job_id)
        for job_id in forwarding_ids:
            forwarding.finish_job(self.container, job_id)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.run_once()
            except Exception:
                log.exception("domain worker pass failed; retrying")
                self._stop.wait(1.0)
            self._wake.wait(self.interval)
            self._wake.clear()

    async def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="domain-worker", daemon=True)
        self._thread.start()

    async def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            await anyio.to_thread.run_sync(self._thread.join, 10.0)

    def describe(self) -> str:
        return f"domain imports and forwarding, every {self.interval:g}s"


register_role("domains", DomainWorker)
