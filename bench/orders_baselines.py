"""The two baselines of the orders benchmark, measured in the same run as the service:

- the raw append rate: an eventsourcing Application as shipped (its own recorder), one thread,
  each save one new aggregate of the events an order's save appends, sized like them;
- the bare endpoint (`bench/bare_order_app.py`): one 2-event save per POST and nothing else,
  driven by the same `wrk` load as the service.
"""

from __future__ import annotations

import json
import random
import time
from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event

from bench.harness import running_bare_app
from bench.scenario_mixed import Tenant
from bench.wrk_load import run_wrk


class Note(Aggregate):
    """The raw baseline's aggregate: a text, rewritten; nothing else."""

    def __init__(self, text: str) -> None:
        self.text = text

    @event("Rewritten")
    def rewrite(self, text: str) -> None:
        self.text = text


class RawAppend(Application[UUID]):
    name = "rawappend"  # on PostgreSQL its own tables beside the service's, same schema


def raw_append_rate(env: dict[str, str], per_save: int, sizes: list[int], seconds: float
                    ) -> tuple[float, list[int]]:
    """Events per second an eventsourcing Application appends to the same store, one thread,
    each save one new aggregate of `per_save` events sized like the orders' events."""
    app = RawAppend(env)
    rng = random.Random(5)
    low, high = min(sizes), max(sizes)
    appended = 0
    try:
        first = app.recorder.max_notification_id() or 0
        started = time.perf_counter()
        while time.perf_counter() - started < seconds:
            note = Note("x" * max(1, rng.randint(low, high) - 150))
            for _ in range(per_save - 1):
                note.rewrite("y" * max(1, rng.randint(low, high) - 150))
            app.save(note)
            appended += per_save
        rate = appended / (time.perf_counter() - started)
        raw_sizes = [len(n.state) for n in app.recorder.select_notifications(first + 1, 200)]
    finally:
        app.close()
    return rate, raw_sizes


def bare_http_rate(store_env: dict[str, str], tenants: list[Tenant], seconds: float,
                   concurrencies: list[int]) -> float:
    """Events per second the bare app appends under the service's load, on the same store:
    the best of the same concurrencies."""
    with running_bare_app("bench.bare_order_app",
                          {"BARE_ORDER_STORE": json.dumps(store_env)}) as port:
        base_url = f"http://127.0.0.1:{port}"
        run_wrk(base_url, tenants, 1.0, 2)  # warm-up
        rates = []
        for connections in concurrencies:
            run = run_wrk(base_url, tenants, seconds, connections)
            rates.append(2 * (run.requests - run.errors) / run.seconds)
        return max(rates)
