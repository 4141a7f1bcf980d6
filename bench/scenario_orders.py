"""Issue 5: sandbox orders end to end, from `POST /orders` to `order.completed` at a local
webhook receiver, on SQLite and on PostgreSQL.

Per store, on one `partner-api serve` (every role, its own data dir, nats-server embedded):
- latency at a fixed offered rate: each order POSTed on schedule, timed from the send to the
  first arrival of its `order.completed` at the receiver (p50, p99);
- the sustained rate: orders as fast as a few connections place them, until every one of them
  completed at the receiver, counted as events appended to the store per second;
- the raw append rate of the same store in the same run: an eventsourcing Application, with
  eventsourcing's own recorder, appending simple aggregates of the same events per save and
  event sizes, as fast as one thread can; on PostgreSQL also through the service's recorder.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import psycopg
from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event

from bench.harness import running_bare_app, running_service
from bench.scenario_deliveries import arrivals, percentile, running_receiver
from bench.scenario_mixed import API, Tenant, listed, sandbox_secrets, set_up_tenants
from infra.settings import Settings
from services.store import EventStore, eventstore_env

RATE = float(os.environ.get("BENCH_ORDER_RATE", "20"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "10"))
# The highest sustained rate is the best of these client concurrencies: more connections in
# flight let the read models and webhooks work in larger batches, up to where they queue.
CONCURRENCIES = [int(c) for c in os.environ.get("BENCH_ORDERS_CONCURRENCY", "8,32").split(",")]
ORGANIZATIONS = 4
RAW_SECONDS = float(os.environ.get("BENCH_RAW_SECONDS", "5"))
COMPLETION_WAIT_SECONDS = 120.0
PG_URL = os.environ.get(
    "PARTNER_API_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test"
)
TARGET_P99_MS = 250
TARGET_RATIO = 0.40
# A file: py-spy records the service during the sustained phase into it, idle threads too
# (where it waits); with BENCH_SPY_GIL=1 only the thread holding the GIL (where CPU goes).
SPY = os.environ.get("BENCH_SPY")
SPY_MODE = "--gil" if os.environ.get("BENCH_SPY_GIL") == "1" else "--idle"
ORDER = {"suite_a": {"domains": 1, "inboxes_per_domain": 2}}


class Note(Aggregate):
    """The raw baseline's aggregate: a text, rewritten; nothing else."""

    def __init__(self, text: str) -> None:
        self.text = text

    @event("Rewritten")
    def rewrite(self, text: str) -> None:
        self.text = text


class RawAppend(Application[UUID]):
    name = "rawappend"  # on PostgreSQL its own tables beside the service's, same schema


def _order_body(tenant: Tenant) -> bytes:
    return json.dumps({"destination": {"workspace_id": tenant.workspace_id}, **ORDER}).encode()


async def _place(client: httpx.AsyncClient, tenant: Tenant, answered: list[float] | None = None
                 ) -> tuple[str, float]:
    """(the order's id, when it was sent as a Unix time); the time to the answer, in ms, is
    appended to `answered`."""
    sent = time.time()
    response = await client.post(
        f"{API}/orders", content=_order_body(tenant),
        headers={**tenant.auth, "Idempotency-Key": str(uuid.uuid4()),
                 "Content-Type": "application/json"},
    )
    response.raise_for_status()
    if answered is not None:
        answered.append((time.time() - sent) * 1000)
    return str(response.json()["data"]["id"]), sent


async def offered_rate(base_url: str, tenants: list[Tenant], rate: float, seconds: float,
                       answered: list[float]) -> tuple[dict[str, float], float]:
    """Orders sent on a fixed schedule whatever the answers take (open loop): sent times by
    order id, and the rate achieved; each POST's response time in `answered`."""
    sent: dict[str, float] = {}
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    async with httpx.AsyncClient(base_url=base_url, timeout=60, limits=limits) as client:

        async def one(number: int, at: float) -> None:
            await asyncio.sleep(max(0.0, at - time.perf_counter()))
            order_id, when = await _place(client, tenants[number % len(tenants)], answered)
            sent[order_id] = when

        started = time.perf_counter()
        count = int(rate * seconds)
        await asyncio.gather(*(one(n, started + n / rate) for n in range(count)))
        return sent, count / max(seconds, time.perf_counter() - started)


async def closed_loop(base_url: str, tenants: list[Tenant], seconds: float, connections: int
                      ) -> dict[str, float]:
    """As many orders as `connections` placing one after another keep going."""
    sent: dict[str, float] = {}
    # Every connection kept alive, as a partner's client would: httpx keeps 20 by default,
    # so past 20 workers each request opened a new TCP connection to the service.
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    async with httpx.AsyncClient(base_url=base_url, timeout=60, limits=limits) as client:

        async def worker(number: int) -> None:
            while time.perf_counter() < deadline:
                order_id, when = await _place(client, tenants[number % len(tenants)])
                sent[order_id] = when

        deadline = time.perf_counter() + seconds
        await asyncio.gather(*(worker(n) for n in range(connections)))
    return sent


def completed_events(base_url: str, tenants: list[Tenant]) -> dict[str, str]:
    """Order id -> the id of its `order.completed` event, as the organizations list them."""
    return {
        item["data"]["id"]: item["id"]
        for item in listed(base_url, tenants, "type=order.completed")
    }


def wait_completed(base_url: str, receiver: str, tenants: list[Tenant], orders: set[str]
                   ) -> dict[str, float]:
    """Order id -> first arrival of its `order.completed` at the receiver, for every order."""
    deadline = time.monotonic() + COMPLETION_WAIT_SECONDS
    while True:
        events = completed_events(base_url, tenants)
        got = arrivals(receiver)
        done = {o: got[events[o]] for o in orders if o in events and events[o] in got}
        if len(done) == len(orders):
            return done
        if time.monotonic() > deadline:
            raise RuntimeError(f"{len(orders) - len(done)} orders never reached the receiver")
        time.sleep(0.25)


def latency_figures(sent: dict[str, float], done: dict[str, float]) -> dict[str, float]:
    lags = [(done[o] - at) * 1000 for o, at in sent.items()]
    return {"p50": round(percentile(lags, 0.5), 1), "p99": round(percentile(lags, 0.99), 1),
            "max": round(max(lags), 1)}


def event_sizes(store: EventStore, after: int, count: int) -> list[int]:
    notifications = store.recorder.select_notifications(start=after + 1, limit=count)
    return [len(n.state) for n in notifications]


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


def bare_http_rate(store_env: dict[str, str], tenants: list[Tenant]) -> float:
    """Events per second that the bare app (`bench/bare_order_app.py`: one 2-event save per
    POST, nothing else) appends when driven like the service, on the same store: the best of
    the same concurrencies."""
    with running_bare_app("bench.bare_order_app",
                          {"BARE_ORDER_STORE": json.dumps(store_env)}) as port:
        base_url = f"http://127.0.0.1:{port}"
        asyncio.run(closed_loop(base_url, tenants, 1.0, 2))  # warm-up
        rates = []
        for connections in CONCURRENCIES:
            started = time.perf_counter()
            placed = asyncio.run(closed_loop(base_url, tenants, SECONDS, connections))
            rates.append(2 * len(placed) / (time.perf_counter() - started))
        return max(rates)


def sustained(base_url: str, receiver: str, tenants: list[Tenant], store: EventStore, pid: int,
              connections: int) -> dict[str, Any]:
    """Orders placed by `connections` for SECONDS, timed until the last one's
    `order.completed` reached the receiver, with the events they appended."""
    before = store.recorder.max_notification_id() or 0
    started = time.time()
    spy = subprocess.Popen(
        [str(Path(sys.executable).parent / "py-spy"), "record", "--pid", str(pid),
         SPY_MODE, "--format", "raw", "-r", "50", "--nonblocking", "-o", f"{SPY}.{connections}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    ) if SPY else None
    placed = asyncio.run(closed_loop(base_url, tenants, SECONDS, connections))
    if spy is not None:
        spy.send_signal(signal.SIGINT)
        spy.wait(timeout=30)
    done = wait_completed(base_url, receiver, tenants, set(placed))
    elapsed = max(done.values()) - started
    appended = (store.recorder.max_notification_id() or 0) - before
    return {"connections": connections, "orders": len(placed), "appended": appended,
            "elapsed": elapsed, "sizes": event_sizes(store, before, appended)}


def measure_store(kind: str) -> dict[str, Any]:
    schema = f"bench_orders_{uuid.uuid4().hex[:12]}"
    extra = {"PARTNER_API_DATABASE_URL": PG_URL, "PARTNER_API_DATABASE_SCHEMA": schema} \
        if kind == "postgres" else {"PARTNER_API_DATABASE_URL": ""}
    try:
        with running_receiver() as receiver, running_service(extra) as (port, env, pid):
            base_url = f"http://127.0.0.1:{port}"
            tenants = set_up_tenants(base_url, f"{receiver}/hook",
                                     sandbox_secrets(env, ORGANIZATIONS))
            settings = Settings.from_env(env)
            store = EventStore(eventstore_env(settings))
            try:
                asyncio.run(closed_loop(base_url, tenants, 1.0, 2))  # warm-up
                answered: list[float] = []
                sent, achieved = asyncio.run(
                    offered_rate(base_url, tenants, RATE, SECONDS, answered))
                latency = latency_figures(sent, wait_completed(base_url, receiver, tenants,
                                                               set(sent)))

                runs = [sustained(base_url, receiver, tenants, store, pid, connections)
                        for connections in CONCURRENCIES]
            finally:
                store.close()
            store_env = eventstore_env(settings)
            # The baseline is eventsourcing as shipped: its own recorder, not the service's
            # one-statement PostgreSQL recorder (measured too, as `service_recorder_...`).
            raw_env = {k: v for k, v in store_env.items() if k != "APPLICATION_RECORDER_TOPIC"}
            if kind == "sqlite":
                raw_env["SQLITE_DBNAME"] = str(settings.data_dir / "raw-append.sqlite")
            best = max(runs, key=lambda run: run["appended"] / run["elapsed"])
            appended, elapsed, sizes = best["appended"], best["elapsed"], best["sizes"]
            per_save = max(1, round(appended / best["orders"]))
            raw_rate, raw_sizes = raw_append_rate(raw_env, per_save, sizes, RAW_SECONDS)
            if kind == "sqlite":
                store_env["SQLITE_DBNAME"] = str(settings.data_dir / "bare-orders.sqlite")
                own_recorder_rate = raw_rate
            else:
                own_recorder_rate, _ = raw_append_rate(store_env, per_save, sizes, RAW_SECONDS)
            bare_rate = bare_http_rate(store_env, tenants)
    finally:
        if kind == "postgres":
            with psycopg.connect(PG_URL, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    events_rate = appended / elapsed
    ratio = events_rate / raw_rate
    return {
        "store": kind,
        "offered_orders_per_second": RATE,
        "achieved_orders_per_second": round(achieved, 1),
        "orders_at_rate": len(sent),
        "post_to_completed_webhook_ms": latency,
        "p99_met": latency["p99"] < TARGET_P99_MS,
        "post_response_ms": {"p50": round(percentile(answered, 0.5), 1),
                             "p99": round(percentile(answered, 0.99), 1)},
        "sustained_by_connections": {
            run["connections"]: round(run["orders"] / run["elapsed"], 1) for run in runs},
        "sustained_connections": best["connections"],
        "sustained_orders": best["orders"],
        "sustained_orders_per_second": round(best["orders"] / elapsed, 1),
        "events_per_order": round(appended / best["orders"], 2),
        "sustained_events_per_second": round(events_rate, 1),
        "raw_append_events_per_second": round(raw_rate, 1),
        "raw_events_per_save": per_save,
        "service_recorder_append_events_per_second": round(own_recorder_rate, 1),
        "ratio_vs_service_recorder": round(events_rate / own_recorder_rate, 3),
        "event_bytes": {"orders": [min(sizes), max(sizes)], "raw": [min(raw_sizes), max(raw_sizes)]},
        "ratio": round(ratio, 3),
        "ratio_met": ratio >= TARGET_RATIO,
        # The ceiling of the stack: a bare HTTP endpoint doing only the save (through the
        # service's recorder), same client.
        "bare_http_append_events_per_second": round(bare_rate, 1),
        "bare_http_ratio": round(bare_rate / raw_rate, 3),
        "service_vs_bare_http": round(events_rate / bare_rate, 3),
    }


def run() -> dict[str, Any]:
    stores = [measure_store(kind) for kind in os.environ.get(
        "BENCH_ORDER_STORES", "sqlite,postgres").split(",")]
    result = {
        "scenario": f"sandbox orders, POST /orders -> order.completed at a local receiver: "
        f"latency at {RATE:g} orders/s for {SECONDS:g} s; sustained rate, the best of "
        f"{CONCURRENCIES} connections, as events appended/s vs raw eventsourcing appends to the same store",
        "target_p99_ms": TARGET_P99_MS,
        "target_ratio": TARGET_RATIO,
        "stores": stores,
    }
    out = Path("bench/results")
    out.mkdir(parents=True, exist_ok=True)
    (out / "orders.json").write_text(json.dumps(result, indent=2))
    return result
