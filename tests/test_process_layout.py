"""`partner-api serve --workers N`: the gateway in N processes and each background role in a
process of its own, woken across processes by the commits of the others."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import httpx
import psycopg
from conftest import free_port
from eventsourcing.domain import Aggregate
from test_platform_processes import CLI, cli, process_status, wait_listening

from bench.wrk_load import children_of
from infra.commit_watch import CommitWatch
from infra.settings import Settings
from infra.store import EventStore, eventstore_env

# Longer than the test may take: a follower that only polled would not see the other
# processes' commits in time.
SLOW_POLL_SECONDS = "60"


class Probe(Aggregate):
    """An aggregate of the tests' own, saved by a store standing for another process."""


def roles_of(pid: int) -> list[str]:
    args = Path(f"/proc/{pid}/cmdline").read_text().split("\0")
    return [args[i + 1] for i, arg in enumerate(args[:-1]) if arg == "--role"]


def test_each_background_role_runs_in_a_process_of_its_own(service_env: dict[str, str]) -> None:
    env = {**os.environ, **service_env, "PARTNER_API_HTTP_PORT": str(free_port()),
           "PARTNER_API_POLL_INTERVAL_SECONDS": SLOW_POLL_SECONDS}
    env.pop("NATS_URL", None)  # its own embedded nats-server, stopped with it
    org = cli(env, "org", "create", "Layout")
    secret = cli(env, "key", "create", org["id"], "--env", "test", "--preset", "full")["secret"]
    base = f"http://127.0.0.1:{env['PARTNER_API_HTTP_PORT']}"
    process = subprocess.Popen([*CLI, "serve", "--workers", "2"], env=env,
                               stdout=subprocess.DEVNULL)
    try:
        wait_listening(base, process)
        layout = sorted(tuple(roles_of(child)) for child in children_of(process.pid)
                        if roles_of(child))
        assert layout == sorted([("projections", "domains", "pool", "swaps"), ("publisher",),
                                 ("dispatcher",), ("grpc",), ("worker", "audit")])
        client = httpx.Client(base_url=f"{base}/partner/v1", timeout=30.0,
                              headers={"Authorization": f"Bearer {secret}"})
        workspace = client.post(
            "/workspaces", json={"provider": "u", "credentials": {"api_key": "k"}},
            headers={"Idempotency-Key": "layout-w"}).json()["data"]["workspace_id"]
        placed = client.post("/orders", headers={"Idempotency-Key": "layout-o"}, json={
            "destination": {"workspace_id": workspace},
            "suite_a": {"domains": 1, "inboxes_per_domain": 1}})
        assert placed.status_code == 201, placed.text
        order_id = placed.json()["data"]["id"]
        # Read-your-writes across processes: the list shows it as soon as the POST answered.
        listed = client.get("/orders").json()["data"]
        assert [o["id"] for o in listed] == [order_id]
        # The gateway's save wakes the worker, the worker's the read models and the outbox,
        # each in its own process: long before any of them would have polled.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            status = client.get(f"/orders/{order_id}").json()["data"]["status"]
            if status == "completed":
                break
            time.sleep(0.1)
        assert status == "completed"
        # The events list is a read model in another process: it shows them a moment later.
        wanted = {"order.in_progress", "domain.connected", "order.completed"}
        while True:
            types = {event["type"] for event in client.get("/events").json()["data"]}
            if wanted <= types or time.monotonic() > deadline + 10:
                break
            time.sleep(0.1)
        assert wanted <= types
    finally:
        started = children_of(process.pid)
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    deadline = time.monotonic() + 15
    for child in started:
        while (status := process_status(child)) and "State:\tZ" not in status:
            assert time.monotonic() < deadline, f"process {child} outlived serve: {status[:60]}"
            time.sleep(0.1)


def test_a_commit_in_another_process_wakes_this_ones_followers(settings: Settings) -> None:
    if settings.database_url:
        with psycopg.connect(settings.database_url, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{settings.database_schema}"')
    here, elsewhere = EventStore(eventstore_env(settings)), EventStore(eventstore_env(settings))
    woken = threading.Event()
    here.on_saved(lambda _position: woken.set())
    watch = CommitWatch(here, settings.database_url)
    watch.start()
    try:
        time.sleep(0.5)  # listening (PostgreSQL) or holding the first stamp (SQLite)
        woken.clear()
        elsewhere.save(Probe())
        assert woken.wait(10.0), "no wake-up after another store committed"
    finally:
        watch.stop()
        here.close()
        elsewhere.close()
