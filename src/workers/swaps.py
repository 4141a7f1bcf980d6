"""The swap worker role (`swaps`): runs sandbox swaps as soon as it sees them, moves live swaps
one step per `PARTNER_API_FULFILLMENT_STEP_SECONDS`, re-checks swaps waiting on the partner, and detaches a
premium swap's old domain when its warm period ends, all on the injected clock.

Its to-do list is the `swaps` read model; each move loads, decides and saves with the
aggregates' version checks (`services/swaps/use_cases.py`), so several workers, or a restarted one,
make each move once.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from domain.events import event_names
from domain.swaps import Swap
from infra.polling import PollingWorker
from infra.sandbox_offsets import on_its_clock
from projections.swaps import SWAP_EVENTS, due_swaps, waiting_swaps, warm_periods_over
from services.swaps.use_cases import advance_swap, detach_warm_domain, recheck_waiting

if TYPE_CHECKING:
    from runtime.container import Container

# Waiting swaps need the partner (or the DNS) to act; re-checking them on every wake-up would
# only burn CPU.
RECHECK_EVERY_SECONDS = 0.25
# A new swap wakes the worker at once (`wake_on`); the interval only bounds how late a live
# step (seconds apart) or a warm period's end (days) is noticed. A pass is two queries, and at
# the 50 ms default they ran twenty times a second whether there was work or not.
MIN_INTERVAL_SECONDS = 0.2


class SwapWorker(PollingWorker):
    thread_name = "swap-worker"
    name = "swaps"
    wake_on = frozenset(event_names(*SWAP_EVENTS))

    def __init__(self, container: Container) -> None:
        interval = max(container.settings.poll_interval_seconds, MIN_INTERVAL_SECONDS)
        super().__init__(container, interval)
        self.step_seconds = container.settings.fulfillment_step_seconds
        self._rechecked_at = 0.0

    def run_once(self) -> int:
        now = self.container.clock.now()
        recheck = time.monotonic() - self._rechecked_at >= RECHECK_EVERY_SECONDS
        with self.container.read_db.read() as cur:
            due = due_swaps(cur, now, self.step_seconds)
            waiting = waiting_swaps(cur) if recheck else []
            warm_over = warm_periods_over(cur, now)
        if recheck:
            self._rechecked_at = time.monotonic()
        self.run_each(due, on_its_clock("swp", Swap, advance_swap))
        self.run_each(waiting, on_its_clock("swp", Swap, recheck_waiting))
        self.run_each(warm_over, detach_warm_domain)
        return len(due) + len(warm_over)


    def describe(self) -> str:
        return f"swaps, one live step every {self.step_seconds:g}s; premium warm period ends"

