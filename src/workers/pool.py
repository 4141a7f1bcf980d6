"""The pool worker role: finishes pool reservations (`pcl_`) and releases (`prl_`): sandbox ones
as soon as it sees them, live ones one `PARTNER_API_FULFILLMENT_STEP_SECONDS` after they were
requested, on the injected clock; a sandbox job's times are its sandbox clock's.

Its to-do list is the `pool_jobs` read model (`projections/pool.py`); each pass loads the job,
decides and saves with the aggregates' version checks, so several workers (or a restarted one)
finish a job once. The steps are the attach use case's (`services/pool/attach.py`:
`complete_reservation`, `complete_release`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from domain.pool_releases import PoolRelease
from domain.pool_reservations import PoolReservation
from infra.polling import PollingWorker
from infra.sandbox_offsets import on_its_clock
from projections.pool import POOL_JOB_EVENTS, due_jobs
from services.pool.attach import complete_release, complete_reservation

if TYPE_CHECKING:
    from runtime.container import Container

# Jobs wait a whole step anyway; a pass on every save covers new ones quickly.
MIN_INTERVAL_SECONDS = 0.2


class PoolWorker(PollingWorker):
    wake_on = POOL_JOB_EVENTS
    thread_name = "pool-worker"
    name = "pool"

    def __init__(self, container: Container) -> None:
        super().__init__(container, max(container.settings.poll_interval_seconds, MIN_INTERVAL_SECONDS))
        self.step_seconds = container.settings.fulfillment_step_seconds

    def run_once(self) -> None:
        due = self.container.clock.now() - self.step_seconds
        with self.container.read_db.read() as cur:
            job_ids = due_jobs(cur, due)
        self.run_each(job_ids, _complete)


    def describe(self) -> str:
        return f"pool attach and release, one step after {self.step_seconds:g}s"


# Each on the clock of its job's sandbox (decisions.md 6), so a sandbox job does not finish
# before it started once its clock was moved forward.
_complete_reservation = on_its_clock("pcl", PoolReservation, complete_reservation)
_complete_release = on_its_clock("prl", PoolRelease, complete_release)


def _complete(container: Container, job_id: str) -> None:
    if job_id.startswith("pcl_"):
        _complete_reservation(container, job_id)
    else:
        _complete_release(container, job_id)

