"""The replay benchmark's history is built through the aggregates as the service builds them:
a change of a command's type there must not leave `make bench` stopping at its first unit."""

from __future__ import annotations

import time

from bench.scenario_replay import EVENTS_PER_UNIT, _unit


def test_a_unit_of_history_holds_the_events_it_promises() -> None:
    aggregates = _unit(7, time.time())
    pending = sum(len(aggregate.collect_events()) for aggregate in aggregates)
    assert pending == EVENTS_PER_UNIT
    bundle = next(a for a in aggregates if type(a).__name__ == "Bundle")
    assert bundle.name == "Bundle 7" and bundle.monthly_sending_volume == 60_007
