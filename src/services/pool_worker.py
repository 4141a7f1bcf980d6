"""The pool worker role: finishes live pool reservations (`pcl_`) and releases (`prl_`) one
`PARTNER_API_FULFILLMENT_STEP_SECONDS` after they were requested, on the injected clock.

Its to-do list is the `pool_jobs` read model; each pass loads the job, decides and saves with
the aggregates' version checks, so several workers (or a restarted one) finish a job once.
"""

from __future__ import annotations

import logging
import threading

import anyio

from projections.pool import due_jobs
from runtime.container import Container
from runtime.roles import register_role
from services.pool_attach import complete_release, complete_reservation

log = logging.getLogger(__name__)
# Jobs wait a whole step anyway; a pass on every save covers new ones quickly.
MIN_INTERVAL_SECONDS = 0.2


class PoolWorker:
    name = "pool"

    def __init__(self, container: Container) -> None:
        self.container = container
        self.step_seconds = container.settings.fulfillment_step_seconds
        self.interval = max(container.settings.poll_interval_seconds, MIN_INTERVAL_SECONDS)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        container.store.on_saved(lambda _id: self._wake.set())

    def run_once(self) -> None:
        due = self.container.clock.now() - self.step_seconds
        with self.container.read_db.read() as cur:
            job_ids = due_jobs(cur, due)
        for job_id in job_ids:
            if job_id.startswith("pcl_"):
                complete_reservation(self.container, job_id)
            else:
                complete_release(self.container, job_id)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.run_once()
            except Exception:
                log.exception("pool worker pass failed; retrying")
                self._stop.wait(1.0)
            self._wake.wait(self.interval)
            self._wake.clear()

    async def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="pool-worker", daemon=True)
        self._thread.start()

    async def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            await anyio.to_thread.run_sync(self._thread.join, 10.0)

    def describe(self) -> str:
        return f"pool attach and release, one step after {self.step_seconds:g}s"


register_role("pool", PoolWorker)
