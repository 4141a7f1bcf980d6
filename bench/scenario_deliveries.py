"""Signed webhook deliveries from stored events to a local receiver, against a plain
`httpx.AsyncClient` POST loop to the same receiver in the same run; then the lag from an event
being stored to its delivery, with events stored at a steady 200 per second.

The service runs as its own process with the publisher, dispatcher and projections roles and a
nats-server of the run; this process stores the events through the event store directly (so
the gateway's cost is not in the figures) into the same SQLite files.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from bench.harness import free_port, wait_http
from domain.organizations import Organization
from infra.ids import parse_id
from infra.nats_server import EmbeddedNats
from infra.settings import Settings
from runtime.container import Container
from webhooks.commands import SetWebhookEndpoint
from webhooks.endpoints import endpoints_of
from webhooks.public_events import stable_event_id

EVENTS = int(os.environ.get("BENCH_DELIVERIES", "3000"))
# Eight organizations of eight concurrent deliveries each: as many requests in flight as the
# plain loop keeps.
ORGANIZATIONS = 8
PLAIN_CONCURRENCY = 64
LAG_RATE = float(os.environ.get("BENCH_LAG_RATE", "200"))
LAG_SECONDS = float(os.environ.get("BENCH_SECONDS", "10"))
# The delivery path in one process; the read models in another, as production runs them.
DELIVERY_ROLES = ["publisher", "dispatcher"]
OTHER_ROLES = ["projections"]
PROFILE = os.environ.get("BENCH_PROFILE")  # a file: cProfile the delivery process into it


@contextmanager
def running_receiver() -> Iterator[str]:
    with running_receiver_process() as (url, _pid):
        yield url


@contextmanager
def running_receiver_process() -> Iterator[tuple[str, int]]:
    """The receiver's URL and process id."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "bench.receiver:app", "--port", str(port),
         "--log-level", "warning", "--no-access-log", "--loop", "uvloop", "--http", "httptools"],
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_http(f"http://127.0.0.1:{port}/stats")
        yield f"http://127.0.0.1:{port}", process.pid
    finally:
        process.terminate()
        process.wait(timeout=20)


@contextmanager
def running_roles(env: dict[str, str], roles: list[str], profile: str | None = None) -> Iterator[int]:
    args = [arg for role in roles for arg in ("--role", role)]
    python = [sys.executable, *(["-m", "cProfile", "-o", profile] if profile else [])]
    process = subprocess.Popen(
        [*python, "-m", "cli.main", "serve", *args], env=env, stdout=subprocess.DEVNULL
    )
    try:
        yield process.pid
    finally:
        process.terminate()
        process.wait(timeout=20)


def cpu_seconds(pid: int | None = None) -> float:
    """User plus system CPU time of a process (all its threads); this one when no pid."""
    if pid is None:
        times = os.times()
        return times.user + times.system
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def arrivals(receiver: str, reset: bool = False) -> dict[str, float]:
    found: dict[str, float] = httpx.get(
        f"{receiver}/{'reset' if reset else 'stats'}", timeout=30
    ).json()["arrivals"]
    return found


def wait_arrivals(receiver: str, expected: set[str], timeout: float = 120) -> dict[str, float]:
    deadline = time.monotonic() + timeout
    while True:
        got = arrivals(receiver)
        if expected <= got.keys():
            return got
        if time.monotonic() > deadline:
            raise RuntimeError(f"{len(expected - got.keys())} events never arrived")
        time.sleep(0.25)


def store_test_event(container: Container, org: Organization) -> str:
    """What `POST /webhook_endpoint/test` stores; returns the event's evt_ id. The aggregate
    stays in memory between calls (each save moves its version on), so storing does not
    replay a growing history."""
    org.request_webhook_test(environment="test", requested_at=container.clock.now())
    recordings = container.store.save(org)
    stored = recordings[-1].domain_event
    return stable_event_id(stored.originator_id, stored.originator_version, 0)


async def plain_loop(url: str, count: int) -> tuple[float, float]:
    """The baseline: the same number of POSTs of an envelope-sized body, no signing, no store."""
    body = json.dumps(
        {"id": "evt_" + "0" * 32, "type": "webhook.test", "created_at": "2026-01-01T00:00:00.000Z",
         "data": {"id": "org_" + "0" * 32, "status": "test",
                  "message": "A test event sent on request; no resource changed."}},
        separators=(",", ":"),
    ).encode()
    queue = iter(range(count))
    async with httpx.AsyncClient(
        timeout=15, limits=httpx.Limits(max_connections=PLAIN_CONCURRENCY)
    ) as client:

        async def worker() -> None:
            for number in queue:
                headers = {"Content-Type": "application/json", "Service-Event-Id": f"plain{number}"}
                response = await client.post(url, content=body, headers=headers)
                response.raise_for_status()

        started, cpu = time.perf_counter(), cpu_seconds()
        await asyncio.gather(*(worker() for _ in range(PLAIN_CONCURRENCY)))
        return count / (time.perf_counter() - started), (cpu_seconds() - cpu) / count


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run() -> dict[str, Any]:
    data_dir = Path(tempfile.mkdtemp(prefix="bench-deliveries-"))
    nats = EmbeddedNats(data_dir)
    env = {
        **os.environ,
        "PARTNER_API_DATA_DIR": str(data_dir),
        "NATS_URL": nats.start(),
        "PARTNER_API_GRPC_PORT": str(free_port()),
        "PARTNER_API_ALLOW_HTTP_WEBHOOKS": "1",
    }
    try:
        with running_receiver() as receiver:
            hook = f"{receiver}/hook"
            container = Container.build(Settings.from_env(env))
            try:
                orgs = [
                    container.accounts.create_organization(f"Bench {i}")["id"]
                    for i in range(ORGANIZATIONS)
                ]
                for org_id in orgs:
                    endpoints_of(container).set_url(org_id, SetWebhookEndpoint(url=hook))
                orgs = [container.store.find(parse_id("org", o), Organization) for o in orgs]
                backlog = {store_test_event(container, orgs[i % len(orgs)]) for i in range(EVENTS)}

                asyncio.run(plain_loop(hook, 200))  # warm-up
                plain_rate, plain_cpu = asyncio.run(plain_loop(hook, EVENTS))
                arrivals(receiver, reset=True)

                with running_roles(env, OTHER_ROLES), running_roles(
                    env, DELIVERY_ROLES, PROFILE
                ) as pid:
                    while not arrivals(receiver):  # started and caught up with the setup
                        time.sleep(0.01)
                    cpu = cpu_seconds(pid)
                    got = wait_arrivals(receiver, backlog)
                    ours_cpu = (cpu_seconds(pid) - cpu) / len(backlog)
                    times = [got[event_id] for event_id in backlog]
                    ours_rate = (len(times) - 1) / (max(times) - min(times))

                    # Lag: store at a steady rate, measure stored -> first arrival.
                    stored_at: dict[str, float] = {}
                    started = time.perf_counter()
                    for i in range(int(LAG_RATE * LAG_SECONDS)):
                        pause = started + i / LAG_RATE - time.perf_counter()
                        if pause > 0:
                            time.sleep(pause)
                        event_id = store_test_event(container, orgs[i % len(orgs)])
                        stored_at[event_id] = time.time()
                    achieved = len(stored_at) / (time.perf_counter() - started)
                    got = wait_arrivals(receiver, set(stored_at))
                    lags = [(got[e] - at) * 1000 for e, at in stored_at.items()]
            finally:
                container.close()
    finally:
        nats.stop()
    ratio = ours_rate / plain_rate if plain_rate else 0.0
    p99 = percentile(lags, 0.99)
    return {
        "scenario": "signed webhook deliveries vs a plain httpx.AsyncClient POST loop; lag at a rate",
        "events": EVENTS,
        "deliveries_per_second": round(ours_rate, 1),
        "plain_loop_per_second": round(plain_rate, 1),
        "ratio": round(ratio, 3),
        "target_ratio": 0.6,
        "ratio_met": ratio >= 0.6,
        # CPU per delivery (the publisher and dispatcher process) vs
        # per plain POST: the same comparison, less at the mercy of a shared machine's load.
        "cpu_ms_per_delivery": round(ours_cpu * 1000, 3),
        "cpu_ms_per_plain_post": round(plain_cpu * 1000, 3),
        "cpu_ratio": round(plain_cpu / ours_cpu, 3) if ours_cpu else 0.0,
        "lag_events_per_second": round(achieved, 1),
        "lag_ms": {
            "p50": round(percentile(lags, 0.5), 1),
            "p99": round(p99, 1),
            "max": round(max(lags), 1),
        },
        "target_lag_p99_ms": 100,
        "lag_met": p99 < 100 and LAG_RATE >= 200,
    }
