"""The service as an operator runs it for the crash and fault tests: one process per role over a
shared PostgreSQL schema and a private NATS (its own port and store, never the machine's 4222),
a client driving orders with Idempotency-Keys, and the checks that nothing was lost.

`PARTNER_API_CHAOS_SCALE` (default 1, `make chaos` sets more) multiplies the load and the rounds.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
from conftest import PG_URL, _reachable, drop_schema, free_port, require
from webhook_receiver import Receiver, wait_until

from audit.records import read_notifications
from audit.replay import replay
from infra.nats_server import EmbeddedNats
from infra.settings import Settings
from projections.follower import tracked_position
from projections.runner import READ_MODELS_TRACKING
from runtime.container import Container
from services.accounts.commands import CreditWallet
from services.accounts.wallet import credit_wallet
from webhooks.mappers import load_mappers
from webhooks.public_events import public_events_for

CLI = [sys.executable, "-m", "cli.main"]
SCALE = max(1, int(os.environ.get("PARTNER_API_CHAOS_SCALE", "1")))
ROLES = ["gateway", "projections", "publisher", "dispatcher", "worker"]
DRAIN_SECONDS = 90.0
# What a client retries with the same key: the service was unreachable or still busy with it.
RETRYABLE_CODES = {"idempotency_in_progress", "internal_error", "provider_unavailable"}


def require_postgres() -> None:
    require("PostgreSQL", _reachable("127.0.0.1", 5432))


class PrivateNats(EmbeddedNats):
    """A nats-server for one test (never the machine's 4222): `stop()` and `start()` again
    bring it back on the same port with the same store, streams and durable consumers."""


@dataclass
class Cluster:
    """Role processes sharing one store; each logs to its own file under `logs`."""

    env: dict[str, str]
    logs: Path
    http_port: int
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    crashes: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def api(self) -> str:
        return f"{self.url}/partner/v1"

    def log_of(self, role: str) -> Path:
        return self.logs / f"{role}.log"

    def start(self, role: str) -> None:
        log = open(self.log_of(role), "ab")  # noqa: SIM115 - owned by the child
        log.write(f"--- start {time.time():.3f}\n".encode())
        log.flush()
        self.processes[role] = subprocess.Popen(
            [*CLI, "serve", "--role", role], env=self.env, stdout=log, stderr=log
        )
        log.close()

    def wait_ready(self, role: str, timeout: float = 90.0) -> None:
        process = self.processes[role]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert process.poll() is None, f"{role} exited:\n{self.log_of(role).read_text()[-3000:]}"
            if role == "gateway":
                try:
                    if httpx.get(self.url + "/healthz", timeout=5.0).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
            else:
                # A background role prints its name once started (runtime/serve.py).
                last_start = self.log_of(role).read_text().rsplit("--- start", 1)[-1]
                if any(line.startswith(role) for line in last_start.splitlines()):
                    return
            time.sleep(0.1)
        raise AssertionError(f"{role} did not come up:\n{self.log_of(role).read_text()[-3000:]}")

    def start_all(self, roles: list[str]) -> None:
        for role in roles:
            self.start(role)
        for role in roles:
            self.wait_ready(role)

    def kill(self, role: str) -> None:
        process = self.processes[role]
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        self.crashes += 1

    def restart(self, role: str) -> None:
        self.start(role)
        self.wait_ready(role)

    def stop_all(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.terminate()
        for process in self.processes.values():
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)


def cluster_env(tmp_path: Path, nats_url: str, **extra: str) -> dict[str, str]:
    schema = f"t_{uuid.uuid4().hex[:12]}"
    return {
        **os.environ,
        "PARTNER_API_DATA_DIR": str(tmp_path / "var"),
        "PARTNER_API_DATABASE_URL": PG_URL,
        "PARTNER_API_DATABASE_SCHEMA": schema,
        # libpq names every connection after the schema: the PostgreSQL fault finds ours by it.
        "PGAPPNAME": f"partner-api-{schema}",
        # Few connections per process: the test's PostgreSQL is shared with every other test.
        "PARTNER_API_DATABASE_POOL_SIZE": "2",
        "NATS_URL": nats_url,
        "PARTNER_API_NATS_STREAM": f"C{uuid.uuid4().hex[:10].upper()}",
        "PARTNER_API_HTTP_PORT": str(free_port()),
        "PARTNER_API_GRPC_PORT": str(free_port()),
        # Set here, not generated on first use: processes starting together would race on it.
        "PARTNER_API_SECRET_KEY": secrets.token_hex(32),
        "PARTNER_API_OPERATOR_TOKEN": "op_" + secrets.token_hex(16),
        "PARTNER_API_ALLOW_HTTP_WEBHOOKS": "1",
        "PARTNER_API_POLL_INTERVAL_SECONDS": "0.05",
        "PARTNER_API_FULFILLMENT_STEP_SECONDS": "0.2",
        "PARTNER_API_WEBHOOK_TIMEOUT_SECONDS": "3",
        "PARTNER_API_WEBHOOK_RETRY_SCHEDULE": "1,2,3,5",
        **extra,
    }


def make_cluster(tmp_path: Path, env: dict[str, str]) -> Cluster:
    logs = tmp_path / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    return Cluster(env, logs, int(env["PARTNER_API_HTTP_PORT"]))


@dataclass
class Tenant:
    org_id: str
    secret: str
    workspace: str = ""

    def client(self, api: str, timeout: float = 15.0) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.secret}"}
        return httpx.Client(base_url=api, headers=headers, timeout=timeout)


def new_live_tenant(container: Container, orders: int) -> Tenant:
    """A live organization with money for `orders` one-domain orders and a generous allowance."""
    org_id = str(container.accounts.create_organization("Chaos", 1000.0, 100_000)["id"])
    credit_wallet(container, CreditWallet(org_id=org_id, amount_cents=10_000 * (orders + 10)))
    return Tenant(org_id, container.accounts.create_key(org_id, "live", "full").secret)


def send(client: httpx.Client, method: str, path: str, key: str, body: Any) -> httpx.Response:
    """One request with its Idempotency-Key, retried with the same key until it is answered."""
    deadline = time.monotonic() + DRAIN_SECONDS
    while True:
        try:
            response = client.request(method, path, json=body, headers={"Idempotency-Key": key})
            code = response.json().get("error", {}).get("code") if response.status_code >= 400 else None
            if code not in RETRYABLE_CODES and response.status_code != 502:
                return response
        except (httpx.TransportError, ValueError):
            pass  # refused, reset or cut mid-answer: the same key makes the retry safe
        assert time.monotonic() < deadline, f"{method} {path} never answered"
        time.sleep(0.1)


def register_workspace_and_webhook(tenant: Tenant, api: str, hook_url: str) -> None:
    with tenant.client(api) as client:
        body = {"name": "Chaos", "provider": "u", "credentials": {"api_key": "key_good"}}
        created = send(client, "POST", "/workspaces", str(uuid.uuid4()), body)
        assert created.status_code == 201, created.text
        tenant.workspace = created.json()["data"]["workspace_id"]
        saved = client.put("/webhook_endpoint", json={"url": hook_url})
        assert saved.status_code == 200, saved.text


@dataclass
class OrderLoad:
    """Places orders one after another from a thread; `accepted` maps key -> order id."""

    tenant: Tenant
    api: str
    total: int
    pause: float = 0.0  # between orders: a steady flow over a while rather than one burst
    accepted: dict[str, str] = field(default_factory=dict)
    refused: list[str] = field(default_factory=list)
    thread: threading.Thread | None = None

    def start(self) -> OrderLoad:
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def _run(self) -> None:
        body = {"destination": {"workspace_id": self.tenant.workspace},
                "suite_a": {"domains": 1, "inboxes_per_domain": 3}}
        with self.tenant.client(self.api) as client:
            for _ in range(self.total):
                key = str(uuid.uuid4())
                response = send(client, "POST", "/orders", key, body)
                if response.status_code == 201:
                    self.accepted[key] = response.json()["data"]["id"]
                else:
                    self.refused.append(f"{response.status_code} {response.text[:200]}")
                time.sleep(self.pause)

    def wait_placed(self, count: int) -> None:
        wait_until(lambda: len(self.accepted) >= count or not self.running, timeout=DRAIN_SECONDS)

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def join(self) -> None:
        assert self.thread is not None
        self.thread.join(timeout=DRAIN_SECONDS * 2)
        assert not self.thread.is_alive(), "the load did not finish"
        assert not self.refused, self.refused[:3]


def list_all(client: httpx.Client, path: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    params: dict[str, Any] = {"per_page": 100}
    while True:
        page = client.get(path, params=params)
        assert page.status_code == 200, page.text
        answer = page.json()
        items += answer["data"]
        next_link = answer["links"]["next"]
        if not next_link:
            return items
        params = dict(parse_qsl(urlsplit(next_link).query))


def expected_event_ids(container: Container, org_id: str) -> set[str]:
    """Every public event the stored history implies for the organization: the oracle the
    receiver is checked against, computed here rather than read from the service."""
    load_mappers()
    store = container.store
    found: set[str] = set()
    for notifications in read_notifications(store, 0):
        for notification in notifications:
            for event in public_events_for(store.mapper.to_domain_event(notification), store):
                if event.org_id == org_id:
                    found.add(event.id)
    return found


def projections_caught_up(container: Container) -> bool:
    head = container.store.recorder.max_notification_id() or 0
    return tracked_position(container.read_db, READ_MODELS_TRACKING) >= head


def order_ids_in_store(container: Container, org_id: str) -> list[str]:
    """Every order placed for the organization, from the event history (not the read models)."""
    from infra.ids import public_id

    placed: list[str] = []
    store = container.store
    for notifications in read_notifications(store, 0):
        for notification in notifications:
            if not notification.topic.endswith("Order.Placed"):
                continue
            event = store.mapper.to_domain_event(notification)
            if event.org_id == org_id:
                placed.append(public_id("ord", event.originator_id))
    return placed


def settings_of(env: dict[str, str]) -> Settings:
    return Settings.from_env(env)


@contextlib.contextmanager
def running_cluster(tmp_path: Path) -> Iterator[tuple[Cluster, Container, Receiver, PrivateNats]]:
    """A private NATS, a fresh schema, a receiver and a cluster (not started yet)."""
    require_postgres()
    nats = PrivateNats(tmp_path)
    env = cluster_env(tmp_path, nats.start())
    cluster = make_cluster(tmp_path, env)
    container = Container.build(settings_of(env))
    receiver = Receiver().start()
    try:
        yield cluster, container, receiver, nats
    finally:
        cluster.stop_all()
        receiver.stop()
        container.close()
        nats.stop()
        drop_schema(env["PARTNER_API_DATABASE_SCHEMA"])


def assert_nothing_lost(
    cluster: Cluster,
    container: Container,
    receiver: Receiver,
    org_id: str,
    secret: str,
    accepted: list[str],
    compare_replay: bool = True,
) -> int:
    """Returns how many public events were checked at the receiver."""
    # The history holds each accepted order exactly once and no other (none duplicated by a
    # retry, none placed without its client hearing of it).
    assert sorted(order_ids_in_store(container, org_id)) == sorted(accepted)

    # Every order finished, and the read models list each of them once.
    with Tenant(org_id, secret).client(cluster.api) as client:

        def all_completed() -> bool:
            listed = list_all(client, "/orders")
            return len(listed) == len(accepted) and all(o["status"] == "completed" for o in listed)

        wait_until(all_completed, timeout=DRAIN_SECONDS)
        assert sorted(o["id"] for o in list_all(client, "/orders")) == sorted(accepted)

    wait_until(lambda: projections_caught_up(container), timeout=DRAIN_SECONDS)
    if compare_replay:
        report = replay(container.settings, container.store, container.read_models)
        assert report.identical, [t.as_json() for t in report.tables if not t.identical]

    # Every public event reached the receiver at least once, each order's completion included.
    expected = expected_event_ids(container, org_id)
    assert len(expected) >= 2 * len(accepted)
    wait_until(lambda: expected <= receiver.event_ids(), timeout=DRAIN_SECONDS)
    completed = {
        r.event["data"]["id"] for r in list(receiver.received)
        if r.event["type"] == "order.completed"
    }
    assert completed >= set(accepted)
    return len(expected)
