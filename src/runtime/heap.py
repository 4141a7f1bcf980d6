"""The cyclic garbage collector, set for a long-running service process.

CPython's collector walks every tracked object of a generation it collects, and a full
collection walks them all: after start a process holds a few hundred thousand (modules,
classes, the framework's route tables), so under load each full collection stopped the
process for 100 to 600 ms, and the orders that happened to be in flight took that long more
(the tail of the latency at 20 orders a second). Once started, what the process built is
moved out of the collector's sight (`gc.freeze`, the use Python's documentation gives it),
and the youngest generation is collected ten times less often: a request allocates many
short-lived objects, most freed by their reference counts long before a collection.
"""

from __future__ import annotations

import gc

# The youngest generation is collected after this many new container objects (Python's
# default: 700); the older two keep their default ratios, but the middle one's is doubled.
YOUNG_THRESHOLD = 10_000
MIDDLE_THRESHOLD = 20
OLD_THRESHOLD = 10


def settle_after_start() -> None:
    """Call once a process has started everything it runs, before it takes work."""
    gc.collect()  # what start-up left as garbage goes now, not into the frozen set
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, OLD_THRESHOLD)
