"""The fulfillment worker: a process manager that follows the event log and moves live orders
one provisioning step per `fulfillment_step_seconds`, runs a sandbox order's every step as soon
as it sees the order placed (or resumed), and finalizes cancellations when their grace window
ends (sandbox ones too).

A sandbox order is answered `in_progress`, as a live one is, and completed here rather than in
its request: the accepted order is saved first, and its job comes from the event log, so an
order whose gateway died right after answering is still completed (by this worker, or by any
other when this one dies too).

Its to-do list (`fulfillment_jobs`, one row per order) is written by a Follower with its own
tracking position, in the same transaction as the position: restarted, it resumes exactly where
the log says each order is. A step's result is saved as an order event, and the order's version
check makes a step that two workers (or a restarted one) attempt land once.
"""

from __future__ import annotations

import logging
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from eventsourcing.domain import Aggregate
from eventsourcing.persistence import RecordConflictError

from domain.orders import CANCEL_SCHEDULED, IN_PROGRESS, Order
from infra.blocking import run_blocking
from infra.conflicts import retry_conflicts
from infra.polling import PollingWorker
from projections.follower import Follower
from services.domains.renewals import due_terms, run_term
from services.orders import steps
from services.orders.use_cases import apply_outcome, finalize_cancel
from services.sandbox.clock import moved_clocks, run_due

if TYPE_CHECKING:
    from runtime.container import Container

log = logging.getLogger(__name__)

SANDBOX_CLOCK_PASS_SECONDS = 1.0
# Anniversaries are days apart; a pass a minute is prompt enough and costs one query.
RENEWAL_PASS_SECONDS = 60.0
ABANDONED_ADVANCE_SECONDS = 120.0

TRACKING = "fulfillment"
STEP, CANCEL = "step", "cancel"
# Due before any clock's now: a sandbox order's steps wait for nothing, whatever clock it reads.
AT_ONCE = 0.0
JOBS_AT_ONCE = 4  # enough to share commits; each may hold a store connection
# Tries of a job on the stored order before its lease decides: the jobs of one pass race
# only each other, so a few retries settle them.
JOB_ATTEMPTS = 5
# A failed step (reported by an operator) holds the order until StepRetried.
_DROP = (Order.ActionRequired, Order.Completed, Order.Failed, Order.Cancelled, Order.StepFailed)


class FulfillmentWorker(PollingWorker):
    thread_name = "fulfillment-worker"
    name = "worker"

    def __init__(self, container: Container) -> None:
        super().__init__(container, container.settings.poll_interval_seconds)
        # Relaxed (PostgreSQL: no flush of its own per commit): the to-do list and its tracking
        # position are rebuilt from the event log together, and a lost lease only runs a job
        # again, which finds its order already moved on. What a job decides is saved to the
        # event store, durably.
        self.db = container.ops_db.relaxed()
        self.step_seconds = container.settings.fulfillment_step_seconds
        self.lease_seconds = max(10.0, 5 * self.step_seconds)
        with self.db.transaction() as cur:
            cur.execute(
                "CREATE TABLE IF NOT EXISTS fulfillment_jobs (order_id TEXT PRIMARY KEY, "
                "job TEXT NOT NULL, due_at DOUBLE PRECISION NOT NULL)"
            )
        self.follower = Follower(container.store, self.db, TRACKING, self._track)
        # The orders its follower reads are the ones it moves: kept, they need no load.
        container.store.keep_histories()
        # The jobs of a pass run side by side (each its own order): their saves then share
        # commits (group commit) instead of each waiting for its own flush in turn. Jobs of
        # one order never run together: a pass lists an order once, and claims it first.
        self._jobs = _job_threads()
        self._next_clock_pass = 0.0
        self._next_renewal_pass = 0.0
        # At start every unsettled advance is a dead process's; later only ones this old are.
        self._abandoned_after = -float("inf")

    def _track(self, cur: Any, event: Any, position: int) -> None:
        kind = type(event)
        order_id = event.originator_id.hex
        if kind is Order.Placed:
            self._schedule(cur, order_id, STEP, self._first_step_due(event, event.created_at))
        elif kind is Order.Resumed:
            self._schedule(cur, order_id, STEP, self._first_step_due(event, event.at))
        elif kind is Order.StepCompleted:
            self._schedule(cur, order_id, STEP, event.at + self.step_seconds)
        elif kind is Order.StepRetried:
            self._schedule(cur, order_id, STEP, event.at)
        elif kind is Order.CancelScheduled:
            self._schedule(cur, order_id, CANCEL, event.cancel_after)
        elif kind in _DROP:
            cur.execute("DELETE FROM fulfillment_jobs WHERE order_id = ?", (order_id,))

    def _first_step_due(self, event: Any, at: float) -> float:
        """A live order's next step waits one step's time; a sandbox order's runs at once."""
        environment = getattr(event, "environment", None)
        if environment is None:  # Resumed does not carry it; resuming is rare, so ask the order
            order = self.container.store.find(event.originator_id, Order)
            environment = order.environment if isinstance(order, Order) else "live"
        return AT_ONCE if environment == "test" else at + self.step_seconds

    @staticmethod
    def _schedule(cur: Any, order_id: str, job: str, due_at: float) -> None:
        cur.execute(
            "INSERT INTO fulfillment_jobs (order_id, job, due_at) VALUES (?, ?, ?) "
            "ON CONFLICT (order_id) DO UPDATE SET job = ?, due_at = ?",
            (order_id, job, due_at, job, due_at),
        )

    def run_once(self) -> int:
        """Catch up with the log, then run every job that is due; returns how many ran."""
        self.follower.catch_up()
        self._run_sandbox_clocks()
        if time.monotonic() >= self._next_renewal_pass:
            self._next_renewal_pass = time.monotonic() + RENEWAL_PASS_SECONDS
            self.renew_live_terms()
        now = self.container.clock.now()
        with self.db.read() as cur:
            due = cur.execute(
                "SELECT order_id, job, due_at FROM fulfillment_jobs WHERE due_at <= ? "
                "ORDER BY due_at LIMIT 50",
                (now,),
            ).fetchall()
        claimed = [row for row in due if self._claim(row, now)]
        if len(claimed) == 1:
            self._run_row(claimed[0])
        elif claimed:
            list(self._jobs.map(self._run_row, claimed))
        return len(claimed)

    def _run_row(self, row: dict[str, Any]) -> None:
        self._run(uuid.UUID(hex=row["order_id"]), row["job"])

    def renew_live_terms(self) -> int:
        """Renew (or lapse) the live domains whose anniversary has come, on real time; the
        sandbox's run on its clock's advances. Returns how many moved."""
        with self.container.read_db.read() as cur:
            due = due_terms(cur, "tenant LIKE ?", "%:live", self.container.clock.real_now())
        moved = 0
        for _due_at, _kind, dom_id in due:
            try:
                moved += run_term(self.container, dom_id) is not None
            except Exception:
                log.exception("renewal of %s failed; it is tried again next pass", dom_id)
        return moved

    def _run_sandbox_clocks(self) -> None:
        """What comes due on the moved sandbox clocks, which run ahead of real time, and what
        an advance a dead process left half done still owes (at start: every unsettled one;
        later: those noted long enough ago that their own process cannot still be on it)."""
        if time.monotonic() < self._next_clock_pass:
            return
        self._next_clock_pass = time.monotonic() + SANDBOX_CLOCK_PASS_SECONDS
        abandoned_before = self.container.clock.real_now() - self._abandoned_after
        for org_id in moved_clocks(self.container):
            try:
                run_due(self.container, org_id, abandoned_before)
            except Exception:
                log.exception("sandbox clock of %s: running what came due failed", org_id)
        self._abandoned_after = ABANDONED_ADVANCE_SECONDS

    def _claim(self, row: dict[str, Any], now: float) -> bool:
        """Push the job's due time out by a lease, unless another worker did so first."""
        # One statement in autocommit: a transaction around it cost two more round trips.
        return bool(
            self.db.statement(
                "UPDATE fulfillment_jobs SET due_at = ? WHERE order_id = ? AND due_at = ? "
                "RETURNING order_id",
                (now + self.lease_seconds, row["order_id"], row["due_at"]),
            )
        )

    def _run(self, order_uuid: uuid.UUID, job: str) -> None:
        # First the order as this worker's follower read it from the log (no load). Should
        # it or what the job saves with it (the wallet a refund goes to, which the jobs of a
        # pass share) have moved on since, the save fails on the version and the job decides
        # again at once on the order as stored, rather than wait out its lease.
        remembered = self.container.store.rebuilt(order_uuid)
        if isinstance(remembered, Order):
            try:
                self._run_on(remembered, job)
                return
            except RecordConflictError:
                pass
        try:
            retry_conflicts(lambda: self._run_stored(order_uuid, job), JOB_ATTEMPTS)
        except RecordConflictError:
            log.info("order %s moved by another writer; the job runs again", order_uuid)

    def _run_stored(self, order_uuid: uuid.UUID, job: str) -> None:
        order = self.container.store.find(order_uuid, Order)
        if isinstance(order, Order):
            self._run_on(order, job)

    def _run_on(self, order: Order, job: str) -> None:
        # A sandbox order's grace window ends on its organization's sandbox clock.
        with self.container.clock.scoped(order.org_id, order.environment):
            self._move(order, job)

    def _move(self, order: Order, job: str) -> None:
        at = self.container.clock.now()
        others: list[Aggregate] = []
        if job == CANCEL and order.status == CANCEL_SCHEDULED:
            others = finalize_cancel(self.container, order, at)
        elif job == STEP and order.status == IN_PROGRESS and order.environment == "test":
            others = apply_outcome(self.container, order, steps.run_all(order, at), at)
        elif job == STEP and order.status == IN_PROGRESS and order.failed_step is None:
            step = steps.next_step(order)
            if step is None:
                order.complete(steps.completed_domains(order.domains), at)
            else:
                outcome = steps.run_step(step, order, at)
                if outcome.action is None and outcome.failure is None:
                    order.record_step(step, outcome.domains, at)
                    if steps.next_step(order) is None:  # the last step: live at once
                        order.complete(steps.completed_domains(order.domains), at)
                else:
                    others = apply_outcome(self.container, order, outcome, at)
        else:
            return
        self.container.store.save(order, *others)

    async def start(self) -> None:
        # Jobs come from the event log; catch up before the first pass so none is missed.
        await run_blocking(self.follower.catch_up)
        await super().start()

    async def stop(self) -> None:
        await super().stop()
        stopped, self._jobs = self._jobs, _job_threads()  # threads start only when used
        stopped.shutdown(wait=False)

    def describe(self) -> str:
        return f"fulfillment, one live step every {self.step_seconds:g}s; sandbox orders at once"


def _job_threads() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(JOBS_AT_ONCE, thread_name_prefix="fulfillment-job")

