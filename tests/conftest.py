"""Shared fixtures: every service test runs once on SQLite and once on PostgreSQL, over real HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import nats
import psycopg
import pytest

from infra.clock import Clock
from infra.database import Database, PostgresDatabase, SQLiteDatabase
from infra.settings import Settings
from runtime.container import Container
from runtime.roles import NEEDS_NATS
from runtime.serve import build_server, resolve_roles
from webhooks.event_log import DELIVERY_DDL

PG_URL = os.environ.get("PARTNER_API_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
NATS_URL = os.environ.get("PARTNER_API_TEST_NATS_URL", "nats://127.0.0.1:4222")
IN_CI = os.environ.get("CI", "").lower() == "true"
# How long a test waits for something that will happen: an answer, a service starting, a
# background step. Sized for a loaded 2-core CI machine running several test workers, where a
# first request (the OpenAPI document is built on its first fetch) can take many seconds; a
# wait ends as soon as the thing happens, so a generous bound costs nothing when all is well.
PATIENCE = 120.0


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False


def require(service: str, available: bool) -> None:
    """Skip on a developer machine without the service; with CI=true, fail instead."""
    if available:
        return
    if IN_CI:
        pytest.fail(f"{service} is required in CI but is not reachable")
    pytest.skip(f"{service} not reachable")


def require_nats() -> str:
    host_port = NATS_URL.split("//", 1)[-1]
    host, _, port = host_port.partition(":")
    require("NATS", _reachable(host, int(port or 4222)))
    return NATS_URL


# Below Linux's ephemeral range (32768-60999): a port the kernel picked for us could be handed to
# an outgoing connection before our server binds it, which failed a CI run.
_TEST_PORTS = range(20000, 32000)


def delete_nats_stream(settings: Settings) -> None:
    """Drop a test's JetStream stream from the shared NATS server."""

    async def delete() -> None:
        connection = await nats.connect(settings.nats_url)
        try:
            await connection.jetstream().delete_stream(settings.nats_stream)
        finally:
            await connection.close()

    asyncio.run(delete())


def free_port() -> int:
    while True:
        port = random.SystemRandom().choice(_TEST_PORTS)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port


@pytest.fixture(params=["sqlite", "postgres"])
def store_kind(request: pytest.FixtureRequest) -> str:
    if request.param == "postgres":
        require("PostgreSQL", _reachable("127.0.0.1", 5432))
    return str(request.param)


def make_env(tmp_path: Path, store_kind: str) -> tuple[dict[str, str], str | None]:
    env = {
        "PARTNER_API_DATA_DIR": str(tmp_path / "var"),
        "PARTNER_API_POLL_INTERVAL_SECONDS": "0.01",
        "PARTNER_API_NATS_STREAM": f"T{uuid.uuid4().hex[:10].upper()}",
        # Each test's gRPC server on a port of its own, so no CLI reaches another test's server.
        "PARTNER_API_GRPC_PORT": str(free_port()),
    }
    schema = None
    if store_kind == "postgres":
        schema = f"t_{uuid.uuid4().hex[:12]}"
        env["PARTNER_API_DATABASE_URL"] = PG_URL
        env["PARTNER_API_DATABASE_SCHEMA"] = schema
    return env, schema


def drop_schema(schema: str | None) -> None:
    if schema:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture
def service_env(tmp_path: Path, store_kind: str) -> Iterator[dict[str, str]]:
    env, schema = make_env(tmp_path, store_kind)
    yield env
    drop_schema(schema)


@pytest.fixture
def settings(service_env: dict[str, str]) -> Settings:
    return Settings.from_env(service_env)


@dataclasses.dataclass
class RunningService:
    base_url: str
    container: Container
    server: Any
    thread: threading.Thread
    roles: list[str] = dataclasses.field(default_factory=list)

    @property
    def api(self) -> str:
        return f"{self.base_url}/partner/v1"

    def client(self, secret: str | None = None, **kwargs: Any) -> httpx.Client:
        headers = {"Authorization": f"Bearer {secret}"} if secret else {}
        return httpx.Client(base_url=self.api, headers=headers, timeout=PATIENCE, **kwargs)

    def new_org(self, name: str = "Acme", **rate: Any) -> str:
        org_id: str = self.container.accounts.create_organization(name, **rate)["id"]
        return org_id

    def new_key(self, org_id: str, env: str = "test", preset: str = "full") -> str:
        return self.container.accounts.create_key(org_id, env, preset).secret

    def partner(self, env: str = "test", preset: str = "full", **rate: Any) -> httpx.Client:
        """A client for a fresh organization's key: the quickest way to a tenant."""
        return self.client(self.new_key(self.new_org(**rate), env, preset))

    def live_twin(self, client: httpx.Client, preset: str = "full") -> httpx.Client:
        """A client of a new live key of the organization `client`'s key belongs to."""
        org_id = client.get("/me").json()["data"]["partner"]["id"]
        return self.client(self.new_key(org_id, "live", preset))

    def put_webhook(self, client: httpx.Client, url: str) -> httpx.Response:
        """`PUT /webhook_endpoint` for `client`'s organization, with a live key of it: the one
        endpoint serves both environments, so a sandbox key may not change it."""
        with self.live_twin(client) as live:
            return live.put("/webhook_endpoint", json={"url": url})

    def wait_projections(self) -> None:
        head = self.container.store.recorder.max_notification_id() or 0
        assert self.container.read_models.wait_for(head, timeout=PATIENCE)


ServiceFactory = Callable[..., RunningService]


def _serve_quietly(server: Any) -> None:
    """uvicorn exits its thread with SystemExit when the port was taken meanwhile; the caller
    sees the thread end and tries another port, so that is not an unhandled thread error."""
    with contextlib.suppress(SystemExit):
        server.run()


@pytest.fixture
def service_factory(settings: Settings) -> Iterator[ServiceFactory]:
    started: list[RunningService] = []

    def start(
        clock: Clock | None = None, roles: list[str] | None = None, **overrides: Any
    ) -> RunningService:
        chosen = roles or [r for r in resolve_roles(None) if r not in NEEDS_NATS]
        if NEEDS_NATS.intersection(chosen) and "nats_url" not in overrides:
            overrides["nats_url"] = require_nats()
        for _attempt in range(3):
            # A port found free can still be bound by another worker before our server binds it;
            # then the server thread exits, and a fresh pair of ports is tried.
            current = dataclasses.replace(settings, **overrides)
            container = Container.build(current, clock)
            port = free_port()
            server, _ = build_server(container, chosen, port)
            thread = threading.Thread(target=_serve_quietly, args=(server,), daemon=True)
            thread.start()
            deadline = time.monotonic() + PATIENCE
            while not server.started and thread.is_alive():
                if time.monotonic() > deadline:
                    raise RuntimeError("service did not start")
                time.sleep(0.02)
            if server.started:
                running = RunningService(
                    f"http://127.0.0.1:{port}", container, server, thread, list(chosen)
                )
                started.append(running)
                return running
            container.close()
            overrides["grpc_port"] = free_port()
        raise RuntimeError("service did not start: no free port pair after 3 attempts")

    yield start
    for running in started:
        running.server.should_exit = True
        running.thread.join(timeout=30)
        running.container.close()


@pytest.fixture
def service(service_factory: ServiceFactory) -> RunningService:
    return service_factory()


@pytest.fixture
def open_db(settings: Settings, tmp_path: Any) -> Iterator[Any]:
    """`open_db(name)`: a database of its own holding the webhook delivery tables (PostgreSQL:
    a schema per name, dropped after the test)."""
    opened: list[Database] = []
    names: list[str] = []

    def open_one(name: str) -> Database:
        names.append(name)
        if settings.database_url:
            schema = f"{settings.database_schema}_{name}"
            with psycopg.connect(settings.database_url, autocommit=True) as conn:
                conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
            db: Database = PostgresDatabase(settings.database_url, schema)
        else:
            db = SQLiteDatabase(tmp_path / f"{name}.sqlite")
        with db.transaction() as cur:
            for ddl in DELIVERY_DDL:
                cur.execute(ddl)
        opened.append(db)
        return db

    yield open_one
    for db in opened:
        db.close()
    if settings.database_url:
        with psycopg.connect(settings.database_url, autocommit=True) as conn:
            for name in names:
                conn.execute(f'DROP SCHEMA IF EXISTS "{settings.database_schema}_{name}" CASCADE')
