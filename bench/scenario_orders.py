"""Sandbox orders end to end, from `POST /orders` to `order.completed` at a local webhook
receiver, on SQLite and on PostgreSQL.

Per store, on one `partner-api serve` (every role, its own data dir, nats-server embedded):
- latency at a fixed offered rate: each order POSTed on schedule, timed from the send to the
  first arrival of its `order.completed` at the receiver (p50, p99);
- the sustained rate: `wrk` placing orders on a few kept-alive connections for a while, timed
  until every one of them completed at the receiver, counted as events appended per second,
  with the CPU time of each process of the run (service, nats-server, wrk, receiver) per order;
- the baselines of the same run (`bench/orders_baselines.py`): eventsourcing as shipped
  appending the same events per save and sizes, and a bare endpoint that only saves.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import psycopg

from bench.flush_probe import FlushProbe
from bench.harness import running_service
from bench.orders_baselines import bare_http_rate, raw_append_rate
from bench.scenario_deliveries import arrivals, percentile, running_receiver_process
from bench.scenario_mixed import API, Tenant, listed, sandbox_secrets, set_up_tenants
from bench.wrk_load import (
    CpuMeter,
    FlushCounter,
    child_named,
    postgres_processes,
    process_label,
    run_wrk,
    service_processes,
)
from infra.settings import Settings
from infra.store import EventStore, eventstore_env

RATE = float(os.environ.get("BENCH_ORDER_RATE", "20"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "10"))
# The highest sustained rate is the best of these client concurrencies: more connections in
# flight let the writes, read models and webhooks work in larger batches, up to where they queue.
CONCURRENCIES = [int(c) for c in os.environ.get("BENCH_ORDERS_CONCURRENCY", "8,32").split(",")]
ORGANIZATIONS = 4
RAW_SECONDS = float(os.environ.get("BENCH_RAW_SECONDS", "5"))
COMPLETION_WAIT_SECONDS = 180.0
PG_URL = os.environ.get(
    "PARTNER_API_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test"
)
TARGET_P99_MS = 250
TARGET_RATIO = 0.40
# A file: py-spy records the service during the sustained phase into it, idle threads too
# (where it waits); with BENCH_SPY_GIL=1 only the thread holding the GIL (where CPU goes).
SPY = os.environ.get("BENCH_SPY")
# py-spy's sampling: "--gil" (the thread holding the GIL), "--idle" (every thread, waiting
# ones too); BENCH_SPY_CPU=1: only threads on the CPU, py-spy's default.
SPY_MODE = ["--gil"] if os.environ.get("BENCH_SPY_GIL") == "1" else (
    [] if os.environ.get("BENCH_SPY_CPU") == "1" else ["--idle"])
# Two gateway processes and one per background role: the layout that uses both cores (an
# interpreter runs Python on one at a time). BENCH_SERVE_ARGS="" measures one process.
LAYOUT = "--workers 2"
ORDER = {"suite_a": {"domains": 1, "inboxes_per_domain": 2}}  # as bench/orders.lua sends


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


def wait_deliveries_settle(receiver: str) -> None:
    """Until the receiver's count of first arrivals stops growing for a second: asked
    cheaply, so that waiting costs the service nothing while it still delivers."""
    deadline = time.monotonic() + COMPLETION_WAIT_SECONDS
    previous, still = -1, 0
    while still < 4 and time.monotonic() < deadline:
        count = int(httpx.get(f"{receiver}/count", timeout=30).text)
        still = still + 1 if count == previous else 0
        previous = count
        time.sleep(0.25)


def latency_figures(sent: dict[str, float], done: dict[str, float]) -> dict[str, Any]:
    lags = [(done[o] - at) * 1000 for o, at in sent.items()]
    start = min(sent.values())
    # When the slowest were sent (seconds into the run): a stall shows as neighbours.
    slowest = sorted(((done[o] - at) * 1000, at - start) for o, at in sent.items())[-5:]
    return {"p50": round(percentile(lags, 0.5), 1), "p99": round(percentile(lags, 0.99), 1),
            "max": round(max(lags), 1),
            "slowest_ms_at_s": [[round(lag, 1), round(at, 2)] for lag, at in reversed(slowest)]}


def event_sizes(store: EventStore, after: int, count: int) -> list[int]:
    notifications = store.recorder.select_notifications(start=after + 1, limit=count)
    return [len(n.state) for n in notifications]


def _spy(pid: int, connections: int) -> subprocess.Popen[bytes] | None:
    if not SPY:
        return None
    return subprocess.Popen(
        [str(Path(sys.executable).parent / "py-spy"), "record", "--pid", str(pid),
         *SPY_MODE, "--subprocesses", "--format", "raw", "-r", os.environ.get("BENCH_SPY_RATE", "50"), "--nonblocking", "-o", f"{SPY}.{connections}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def sustained(base_url: str, receiver: str, tenants: list[Tenant], store: EventStore,
              meter: CpuMeter, service_pid: int, connections: int) -> dict[str, Any]:
    """Orders placed by `wrk` on `connections` for SECONDS, timed until the last one's
    `order.completed` reached the receiver, with the events they appended and the CPU time
    each process spent meanwhile."""
    known = set(completed_events(base_url, tenants))
    before = store.recorder.max_notification_id() or 0
    spy = _spy(service_pid, connections)
    flushes = FlushCounter(service_processes(service_pid))
    flushes.start()
    meter.start()
    started = time.time()
    load = run_wrk(base_url, tenants, SECONDS, connections)
    if load.errors == load.requests:
        raise RuntimeError(f"every one of {load.requests} orders was refused")
    if spy is not None:
        spy.send_signal(signal.SIGINT)
        spy.wait(timeout=30)
    wait_deliveries_settle(receiver)
    cpu = meter.stop()
    flushed = flushes.stop()
    cpu["client"] = load.cpu_seconds
    events = {o: e for o, e in completed_events(base_url, tenants).items() if o not in known}
    done = wait_completed(base_url, receiver, tenants, set(events))
    orders = len(done)
    elapsed = max(done.values()) - started
    appended = (store.recorder.max_notification_id() or 0) - before
    return {"connections": connections, "orders": orders, "answered": load.requests,
            "errors": load.errors, "appended": appended, "elapsed": elapsed,
            "post_ms": {"p50": load.p50_ms, "p99": load.p99_ms},
            "cpu_ms_per_order": {name: round(1000 * used / orders, 2)
                                 for name, used in cpu.items()},
            "service_cpu_ms_per_order_by_process": _by_process(meter, orders),
            # Each a thread or process put to sleep and woken again: on a virtual machine a
            # wake-up can cost more CPU than the work it waited for.
            "context_switches_per_order": {name: round(count / orders, 1)
                                           for name, count in meter.switches.items()},
            # SQLite's durable commits are the service's own fsyncs (PostgreSQL's, the server's).
            "flushes_per_order": None if flushed is None else round(flushed / orders, 2),
            "sizes": event_sizes(store, before, appended)}


def _by_process(meter: CpuMeter, orders: int) -> dict[str, float]:
    """The service's CPU per order by process (its roles), where it runs several."""
    split: dict[str, float] = {}
    for pid, used in meter.by_pid["service"].items():
        label = process_label(pid)
        split[label] = round(split.get(label, 0.0) + 1000 * used / orders, 2)
    return split


def _store_extra(kind: str, schema: str) -> dict[str, str]:
    if kind == "postgres":
        return {"PARTNER_API_DATABASE_URL": PG_URL, "PARTNER_API_DATABASE_SCHEMA": schema}
    return {"PARTNER_API_DATABASE_URL": ""}


def measure_store(kind: str) -> dict[str, Any]:
    schema = f"bench_orders_{uuid.uuid4().hex[:12]}"
    try:
        with running_receiver_process() as (receiver, receiver_pid), \
                running_service(_store_extra(kind, schema), LAYOUT) as (port, env, pid):
            base_url = f"http://127.0.0.1:{port}"
            tenants = set_up_tenants(base_url,
                                     sandbox_secrets(env, ORGANIZATIONS, f"{receiver}/hook"))
            settings = Settings.from_env(env)
            nats_pid = child_named(pid, "nats-server")
            meter = CpuMeter({
                "service": lambda: service_processes(pid),
                "nats-server": lambda: [nats_pid] if nats_pid else [],
                "receiver": lambda: [receiver_pid],
                "postgresql": postgres_processes,
            })
            store = EventStore(eventstore_env(settings))
            try:
                run_wrk(base_url, tenants, 1.0, 2)  # warm-up
                # The rate run starts from a quiet service, not behind the warm-up's webhooks.
                wait_deliveries_settle(receiver)
                answered: list[float] = []
                with FlushProbe(settings.data_dir) as probe:
                    sent, achieved = asyncio.run(
                        offered_rate(base_url, tenants, RATE, SECONDS, answered))
                latency = latency_figures(sent, wait_completed(base_url, receiver, tenants,
                                                               set(sent)))
                latency["disk_flush_ms"] = probe.figures(since=min(sent.values()))
                runs = [sustained(base_url, receiver, tenants, store, meter, pid, connections)
                        for connections in CONCURRENCIES]
            finally:
                store.close()
            store_env = eventstore_env(settings)
            best = max(runs, key=lambda run: run["appended"] / run["elapsed"])
            raw_rate, raw_sizes = raw_append_rate(
                _raw_env(kind, store_env, settings), _events_per_save(best), best["sizes"],
                RAW_SECONDS)
            if kind == "sqlite":
                store_env["SQLITE_DBNAME"] = str(settings.data_dir / "bare-orders.sqlite")
            bare_rate = bare_http_rate(store_env, tenants, SECONDS, CONCURRENCIES)
    finally:
        if kind == "postgres":
            with psycopg.connect(PG_URL, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    return _figures(kind, achieved, sent, latency, answered, runs, best, raw_rate, raw_sizes,
                    bare_rate)


def _raw_env(kind: str, store_env: dict[str, str], settings: Settings) -> dict[str, str]:
    """eventsourcing as shipped: its own recorder, not the service's PostgreSQL one; on SQLite
    a file of its own beside the service's."""
    raw_env = {k: v for k, v in store_env.items() if k != "APPLICATION_RECORDER_TOPIC"}
    if kind == "sqlite":
        raw_env["SQLITE_DBNAME"] = str(settings.data_dir / "raw-append.sqlite")
    return raw_env


# A sandbox order is saved twice: accepted (`in_progress`) by its request, then completed by
# the fulfillment worker.
SAVES_PER_ORDER = 2


def _events_per_save(run: dict[str, Any]) -> int:
    """The events of one of an order's saves, as the raw baseline saves them."""
    return max(1, round(run["appended"] / run["orders"] / SAVES_PER_ORDER))


def _figures(kind: str, achieved: float, sent: dict[str, float], latency: dict[str, Any],
             answered: list[float], runs: list[dict[str, Any]], best: dict[str, Any],
             raw_rate: float, raw_sizes: list[int], bare_rate: float) -> dict[str, Any]:
    events_rate = best["appended"] / best["elapsed"]
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
        "sustained_errors": best["errors"],
        "sustained_post_ms": best["post_ms"],
        "sustained_orders_per_second": round(best["orders"] / best["elapsed"], 1),
        "events_per_order": round(best["appended"] / best["orders"], 2),
        "sustained_events_per_second": round(events_rate, 1),
        "raw_append_events_per_second": round(raw_rate, 1),
        "raw_events_per_save": _events_per_save(best),
        "event_bytes": {"orders": [min(best["sizes"]), max(best["sizes"])],
                        "raw": [min(raw_sizes), max(raw_sizes)]},
        "ratio": round(ratio, 3),
        "ratio_met": ratio >= TARGET_RATIO,
        # The ceiling of the stack: a bare HTTP endpoint doing only the save, same load.
        "bare_http_append_events_per_second": round(bare_rate, 1),
        "bare_http_ratio": round(bare_rate / raw_rate, 3),
        "service_vs_bare_http": round(events_rate / bare_rate, 3),
        "cpu_ms_per_order": best["cpu_ms_per_order"],
        "service_cpu_ms_per_order_by_process": best["service_cpu_ms_per_order_by_process"],
        "context_switches_per_order": best["context_switches_per_order"],
        "service_flushes_per_order": best["flushes_per_order"],
    }


def table(stores: list[dict[str, Any]]) -> str:
    """The figures as bench/README.md shows them."""
    lines = [
        "| store | p50 / p99 at 20/s (ms) | longest disk flush meanwhile (ms) "
        "| sustained orders/s | events per order | events/s "
        "| raw events/s | ratio | bare endpoint ratio | CPU ms per order: service / nats-server "
        "/ client (wrk) / receiver / PostgreSQL server |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for s in stores:
        cpu = s["cpu_ms_per_order"]
        latency = s["post_to_completed_webhook_ms"]
        lines.append(
            f"| {s['store']} | {latency['p50']} / {latency['p99']} "
            f"| {latency['disk_flush_ms'].get('max', '-')} | {s['sustained_orders_per_second']} "
            f"| {s['events_per_order']} | {s['sustained_events_per_second']} "
            f"| {s['raw_append_events_per_second']} | {s['ratio']} | {s['bare_http_ratio']} "
            f"| {cpu.get('service', 0)} / {cpu.get('nats-server', 0)} / {cpu.get('client', 0)} "
            f"/ {cpu.get('receiver', 0)} / {cpu.get('postgresql', 0)} |"
        )
    return "\n".join(lines)


def run() -> dict[str, Any]:
    stores = [measure_store(kind) for kind in os.environ.get(
        "BENCH_ORDER_STORES", "sqlite,postgres").split(",")]
    result = {
        "scenario": f"sandbox orders, POST /orders -> order.completed at a local receiver: "
        f"latency at {RATE:g} orders/s for {SECONDS:g} s; sustained rate under wrk, the best of "
        f"{CONCURRENCIES} connections, as events appended/s vs raw eventsourcing appends to the "
        "same store",
        "layout": f"partner-api serve {os.environ.get('BENCH_SERVE_ARGS', LAYOUT)}".strip(),
        "target_p99_ms": TARGET_P99_MS,
        "target_ratio": TARGET_RATIO,
        "load_average": os.getloadavg(),
        "stores": stores,
    }
    print(table(stores), flush=True)
    out = Path("bench/results")
    out.mkdir(parents=True, exist_ok=True)
    (out / "orders.json").write_text(json.dumps(result, indent=2))
    (out / "orders.md").write_text(table(stores) + "\n")
    return result
