"""Reads, writes and webhooks from several organizations at once, on one real service.

Each connection picks an operation by weight and a sandbox organization at random, so every
endpoint sees every tenant while the others write. Every organization's webhook endpoint is a
local receiver; after the load, the events each organization can list (`GET /events`) must all
arrive there, and the lag from an event's `created_at` to its first arrival is reported.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import httpx

from bench.harness import running_service
from bench.loadgen import LoadResult, build_request
from bench.scenario_deliveries import arrivals, percentile, running_receiver

SECONDS = float(os.environ.get("BENCH_SECONDS", "10"))
ORGANIZATIONS = int(os.environ.get("BENCH_MIXED_ORGS", "5"))
CONNECTIONS = 16
WEBHOOK_WAIT_SECONDS = 120.0
API = "/partner/v1"
# Weights: mostly reads, as partners poll; a retry resends an earlier order with its key.
MIX: dict[str, int] = {
    "GET /me": 20,
    "GET /orders": 10,
    "GET /domains": 10,
    "GET /events": 10,
    "POST /orders": 10,
    "POST /orders (retry)": 2,
    "POST /domains/availability": 10,
    "POST /bundles": 5,
}
NAMES = [
    f"mixed{i}{'taken' if i % 7 == 0 else ''}.{('com', 'io', 'net')[i % 3]}" for i in range(10)
]


@dataclass
class Tenant:
    secret: str
    workspace_id: str = ""
    placed: list[tuple[str, bytes]] = field(default_factory=list)  # (Idempotency-Key, body)

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.secret}"}


class Receiving(Protocol):
    """Where the organizations' webhooks land: first arrival per event id, and POSTs seen."""

    def arrivals(self) -> dict[str, float]: ...

    def posts(self) -> int: ...


@dataclass
class Tally:
    """Per operation: latencies and the status codes answered."""

    results: dict[str, LoadResult] = field(default_factory=dict)
    statuses: dict[str, Counter[int]] = field(default_factory=dict)

    def record(self, operation: str, status: int, latency: float) -> None:
        result = self.results.setdefault(operation, LoadResult(0, 0, 0.0, []))
        result.requests += 1
        result.latencies.append(latency)
        if status >= 400:
            result.errors += 1
        self.statuses.setdefault(operation, Counter())[status] += 1


def admin(env: dict[str, str], *argv: str) -> dict[str, Any]:
    """An operator CLI command through the running server's gRPC admin service, in-process
    (a `partner-api` process per command costs seconds on a loaded machine)."""
    import cli.extensions  # noqa: F401  (registers the CLI's sub-commands)
    from cli.main import build_parser
    from gateway.grpc.client import run_remote
    from infra.settings import Settings

    settings, args = Settings.from_env(env), build_parser().parse_args(list(argv))
    # The gRPC role may come up after the gateway answers /healthz (its own process under
    # --workers); None means no server answered, so nothing ran and asking again is safe.
    deadline = time.monotonic() + 30
    while (answer := run_remote(settings, args)) is None:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the service's admin API did not answer {argv}")
        time.sleep(0.2)
    return answer


def sandbox_secrets(env: dict[str, str], count: int, hook: str) -> list[str]:
    """Full sandbox keys of new organizations whose webhooks go to `hook` (set by the
    operator: a sandbox key may not change the endpoint), rate limits out of the way (load,
    not the limiter, is measured here)."""
    secrets = []
    for number in range(count):
        org = admin(env, "org", "create", f"Mixed {number}", "--rate-rps", "1000000",
                    "--rate-burst", "1000000")
        admin(env, "webhook", "set", str(org["id"]), hook)
        key = admin(env, "key", "create", str(org["id"]), "--env", "test", "--preset", "full")
        secrets.append(str(key["secret"]))
    return secrets


def set_up_tenants(base_url: str, secrets: list[str]) -> list[Tenant]:
    """Each organization with a workspace to order into."""
    tenants = []
    for secret in secrets:
        tenant = Tenant(secret)
        with httpx.Client(base_url=base_url + API, headers=tenant.auth, timeout=30) as client:
            workspace = client.post(
                "/workspaces",
                json={"name": "Mixed", "provider": "u", "credentials": {"api_key": "key_good"}},
                headers={"Idempotency-Key": str(uuid.uuid4())},
            )
            workspace.raise_for_status()
            tenant.workspace_id = str(workspace.json()["data"]["workspace_id"])
        tenants.append(tenant)
    return tenants


def _json(value: dict[str, Any]) -> bytes:
    return json.dumps(value).encode()


def next_request(
    operation: str, tenant: Tenant, rng: random.Random
) -> tuple[str, bytes, tuple[str, bytes] | None]:
    """(the operation as measured, the raw request, a new order's key and body to retry once
    it succeeded); a retry before any order is a new order."""
    auth = tenant.auth
    if operation.startswith("GET "):
        request = build_request("GET", API + operation[4:] + "?per_page=25", auth)
        return operation, request, None
    if operation == "POST /domains/availability":
        body = _json({"domains": rng.sample(NAMES, 5)})
        return operation, build_request("POST", f"{API}/domains/availability", auth, body), None
    if operation == "POST /bundles":
        volume = rng.randrange(1_000, 100_000)
        body = _json({"name": "Mixed", "monthly_sending_volume": volume, "send_on_weekends": True})
        return operation, build_request("POST", f"{API}/bundles", auth, body), None
    new: tuple[str, bytes] | None = None
    if operation == "POST /orders (retry)" and tenant.placed:
        key, body = rng.choice(tenant.placed)
    else:
        operation = "POST /orders"
        key = str(uuid.uuid4())
        body = _json({"destination": {"workspace_id": tenant.workspace_id},
                      "suite_a": {"domains": 1, "inboxes_per_domain": 2}})
        new = (key, body)
    headers = {**auth, "Idempotency-Key": key}
    return operation, build_request("POST", f"{API}/orders", headers, body), new


async def _read_status(reader: asyncio.StreamReader) -> tuple[int, bool]:
    """The status, and whether the server keeps the connection open."""
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    length = 0
    keep_alive = True
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
        elif name.strip().lower() == b"connection" and value.strip().lower() == b"close":
            keep_alive = False
    if length:
        await reader.readexactly(length)
    return status, keep_alive


async def _connection(
    port: int, tenants: list[Tenant], deadline: float, tally: Tally, seed: int
) -> None:
    rng = random.Random(seed)
    operations, weights = list(MIX), list(MIX.values())
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while time.perf_counter() < deadline:
            chosen = rng.choices(operations, weights)[0]
            tenant = rng.choice(tenants)
            operation, request, new_order = next_request(chosen, tenant, rng)
            started = time.perf_counter()
            writer.write(request)
            status, keep_alive = await _read_status(reader)
            tally.record(operation, status, time.perf_counter() - started)
            if new_order and status < 300:
                tenant.placed.append(new_order)
            if not keep_alive:
                writer.close()
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
    finally:
        writer.close()


async def mixed_load(port: int, tenants: list[Tenant], seconds: float, connections: int) -> Tally:
    tally = Tally()
    started = time.perf_counter()
    await asyncio.gather(
        *(_connection(port, tenants, started + seconds, tally, seed) for seed in range(connections))
    )
    elapsed = time.perf_counter() - started
    for result in tally.results.values():
        result.seconds = elapsed
    return tally


def listed(base_url: str, tenants: list[Tenant], query: str) -> Iterator[dict[str, Any]]:
    """Every item of `GET /events?<query>` for each organization, following the pages."""
    for tenant in tenants:
        with httpx.Client(base_url=base_url, headers=tenant.auth, timeout=30) as client:
            link: str | None = f"{API}/events?" + "&".join(filter(None, [query, "per_page=100"]))
            while link:
                page = client.get(link)
                page.raise_for_status()
                yield from page.json()["data"]
                link = page.json()["links"]["next"]


def listed_events(base_url: str, tenants: list[Tenant]) -> dict[str, float]:
    """Every event the organizations can list, with its created_at as a Unix time."""
    return {
        event["id"]: datetime.fromisoformat(event["created_at"]).timestamp()
        for event in listed(base_url, tenants, "")
    }


def wait_deliveries(
    base_url: str, arrived: Callable[[], dict[str, float]], tenants: list[Tenant], timeout: float
) -> tuple[dict[str, float], dict[str, float]]:
    """(events listed, first arrivals) once every listed event arrived twice in a row (the list
    may still grow while projections catch up), or at the deadline."""
    deadline = time.monotonic() + timeout
    previous = -1
    while True:
        expected = listed_events(base_url, tenants)
        got = arrived()
        complete = expected.keys() <= got.keys()
        if (complete and len(expected) == previous) or time.monotonic() > deadline:
            return expected, got
        previous = len(expected) if complete else -1
        time.sleep(0.5)


def webhook_summary(
    expected: dict[str, float], got: dict[str, float], posts: int
) -> dict[str, Any]:
    received = [event_id for event_id in expected if event_id in got]
    lags = [max(0.0, got[event_id] - expected[event_id]) * 1000 for event_id in received]
    return {
        "expected": len(expected),
        "received": len(received),
        "missing": len(expected) - len(received),
        "posts": posts,  # more than received: at-least-once redeliveries
        "lag_ms": {
            "p50": round(percentile(lags, 0.5), 1) if lags else None,
            "p99": round(percentile(lags, 0.99), 1) if lags else None,
            "max": round(max(lags), 1) if lags else None,
        },
    }


def endpoint_summaries(tally: Tally) -> dict[str, Any]:
    endpoints = {}
    for operation in [*MIX, *(o for o in tally.results if o not in MIX)]:
        if operation not in tally.results:
            continue
        summary: dict[str, Any] = tally.results[operation].summary()
        statuses = tally.statuses[operation]
        summary["statuses"] = {str(s): n for s, n in sorted(statuses.items())}
        summary["server_errors"] = sum(n for s, n in statuses.items() if s >= 500)
        endpoints[operation] = summary
    return endpoints


def load_and_wait(
    port: int,
    tenants: list[Tenant],
    receiver: Receiving,
    seconds: float,
    connections: int,
    webhook_wait: float,
) -> dict[str, Any]:
    """The load on a running service, then the webhook accounting: the figures of one run."""
    base_url = f"http://127.0.0.1:{port}"
    tally = asyncio.run(mixed_load(port, tenants, seconds, connections))
    expected, got = wait_deliveries(base_url, receiver.arrivals, tenants, webhook_wait)
    total = sum(r.requests for r in tally.results.values())
    return {
        "scenario": f"mixed reads, writes and webhooks: {len(tenants)} sandbox organizations, "
        f"{connections} connections, {seconds:g} s",
        "total_rps": round(total / seconds, 1),
        "endpoints": endpoint_summaries(tally),
        "webhooks": webhook_summary(expected, got, receiver.posts()),
    }


class ReceiverProcess:
    """bench/receiver.py in its own process, asked over HTTP."""

    def __init__(self, url: str) -> None:
        self.url = url

    def arrivals(self) -> dict[str, float]:
        return arrivals(self.url)

    def posts(self) -> int:
        return int(httpx.get(f"{self.url}/stats", timeout=30).json()["posts"])


def measure(
    seconds: float = SECONDS,
    organizations: int = ORGANIZATIONS,
    connections: int = CONNECTIONS,
    webhook_wait: float = WEBHOOK_WAIT_SECONDS,
) -> dict[str, Any]:
    """Against `partner-api serve` (every role, SQLite and nats-server embedded) in a process."""
    with running_receiver() as url, running_service() as (port, env, _pid):
        tenants = set_up_tenants(f"http://127.0.0.1:{port}",
                                 sandbox_secrets(env, organizations, f"{url}/hook"))
        result = load_and_wait(port, tenants, ReceiverProcess(url), seconds, connections,
                               webhook_wait)
    result["scenario"] += ", `partner-api serve` with every role, SQLite default"
    return result


def table(result: dict[str, Any]) -> str:
    lines = [f"{'endpoint':28} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'requests':>8} "
             f"{'errors':>6} {'5xx':>4}"]
    for name, row in result["endpoints"].items():
        lines.append(f"{name:28} {row['rps']:8.1f} {row['p50_ms']:8.1f} {row['p99_ms']:8.1f} "
                     f"{row['requests']:8d} {row['errors']:6d} {row['server_errors']:4d}")
    lines.append(f"{'all':28} {result['total_rps']:8.1f}")
    hooks = result["webhooks"]
    lines.append(f"webhooks: {hooks['received']} of {hooks['expected']} received "
                 f"({hooks['posts']} POSTs); lag p50 {hooks['lag_ms']['p50']} ms, "
                 f"p99 {hooks['lag_ms']['p99']} ms")
    return "\n".join(lines)


def run() -> dict[str, Any]:
    result = measure()
    print(table(result), flush=True)
    out = Path("bench/results")
    out.mkdir(parents=True, exist_ok=True)
    (out / "mixed.json").write_text(json.dumps(result, indent=2))
    return result
