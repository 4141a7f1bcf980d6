"""`partner-api serve`: every role in one process by default, or any subset of them."""

from __future__ import annotations

import asyncio
import ctypes
import dataclasses
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
import uvloop
from litestar import Litestar

from adapters import dkim
from gateway.rest import metrics
from gateway.rest.app import BASE_PATH, create_app
from infra.clock import Clock
from infra.commit_watch import CommitWatch
from infra.deployment import store_label
from infra.nats_server import EmbeddedNats
from infra.settings import Settings, host_port
from infra.wal_checkpoints import WalCheckpointer
from runtime.bootstrap import ROLE_FACTORIES
from runtime.container import Container
from runtime.heap import settle_after_start
from runtime.http_edge import EdgeLimits, bounded_protocol
from runtime.roles import GATEWAY, NEEDS_NATS, Role

# decisions.md names six roles; the background work on resources is split finer here, so the
# `worker` it names runs every part of it. Each part can still be run (and scaled) alone.
WORKER_PARTS = ("domains", "pool", "swaps", "audit")
# The parts whose to-do lists are read models: woken as this process applies them.
READ_MODEL_WORKERS = ("domains", "pool", "swaps")
# Roles that follow the event log: woken when another process commits to it.
FOLLOW_THE_LOG = {"projections", "publisher", "worker", "audit"}


def resolve_roles(requested: list[str] | None) -> list[str]:
    if not requested or "all" in requested:
        return [GATEWAY, *ROLE_FACTORIES]
    unknown = [r for r in requested if r not in [GATEWAY, *ROLE_FACTORIES]]
    if unknown:
        raise SystemExit(f"unknown role(s): {', '.join(unknown)}; known: {', '.join([GATEWAY, *ROLE_FACTORIES])}")
    resolved: list[str] = []
    for role in requested:
        for name in (role, *WORKER_PARTS) if role == "worker" else (role,):
            if name not in resolved:
                resolved.append(name)
    return resolved


class RunningRoles:
    """Starts the background roles in the gateway's lifespan (or alone) and stops them in order."""

    def __init__(self, container: Container, names: list[str]) -> None:
        self.roles: list[Role] = [ROLE_FACTORIES[n](container) for n in names if n != GATEWAY]
        self.announce: str | None = None  # printed once the roles run and the port listens
        self.server: uvicorn.Server | None = None  # the one whose port the announce names
        self._announcing: asyncio.Task[None] | None = None
        settings = container.settings
        self.checkpoints = None if settings.database_url else WalCheckpointer(settings.data_dir)
        follows_log = FOLLOW_THE_LOG.intersection(names)
        self.commit_watch = CommitWatch(container.store, settings.database_url) if follows_log else None

    async def start(self) -> None:
        if self.checkpoints is not None:
            self.checkpoints.start()
        dkim.start_making_keys()  # a deployment's first start makes its set, in the background
        if self.commit_watch is not None:
            self.commit_watch.start()
        for role in self.roles:
            await role.start()
            print(f"{role.name:12} {role.describe()}", flush=True)
        if self.announce:
            # uvicorn binds its port after the lifespan starts: a caller that connects on
            # reading the line must find it listening.
            self._announcing = asyncio.create_task(self._announce_when_listening(self.announce))

    async def _announce_when_listening(self, line: str) -> None:
        while self.server is not None and not self.server.started:
            await asyncio.sleep(0.01)
        settle_after_start()  # the process of `serve` itself: everything it runs has started
        print(line, flush=True)

    async def stop(self) -> None:
        if self._announcing is not None:
            self._announcing.cancel()
        for role in reversed(self.roles):
            await role.stop()
        if self.checkpoints is not None:
            self.checkpoints.stop()
        if self.commit_watch is not None:
            self.commit_watch.stop()

    @asynccontextmanager
    async def lifespan(self, _: Litestar) -> AsyncIterator[None]:
        await self.start()
        try:
            yield
        finally:
            await self.stop()


def build_server(
    container: Container, roles: list[str], port: int | None = None
) -> tuple[uvicorn.Server, RunningRoles]:
    running = RunningRoles(container, roles)
    app = create_app(container, lifespans=[running.lifespan])
    limits = EdgeLimits.of(container.settings)
    config = uvicorn.Config(
        app,
        host=container.settings.host,
        port=container.settings.http_port if port is None else port,
        log_level="warning",
        access_log=False,
        lifespan="on",
        loop="uvloop",
        http=bounded_protocol(limits),
        timeout_keep_alive=limits.keep_alive_timeout,
    )
    running.server = uvicorn.Server(config)
    return running.server, running


def _stop_with_parent() -> None:
    """`make run` sets PARTNER_API_STOP_WITH_PARENT=1: make does not pass a SIGTERM on to the
    command it runs, so the kernel sends this process one when make dies, and the service
    stops (its embedded NATS too) instead of running on orphaned."""
    if os.environ.get("PARTNER_API_STOP_WITH_PARENT") == "1":
        pr_set_pdeathsig = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def serve(requested: list[str] | None, workers: int = 1, clock: Clock | None = None) -> None:
    roles = resolve_roles(requested)
    _stop_with_parent()
    settings = Settings.from_env()
    _refuse_taken_ports(settings, roles)
    nats: EmbeddedNats | None = None
    if not settings.nats_url and NEEDS_NATS.intersection(roles):
        nats = EmbeddedNats(settings.data_dir)
        settings = dataclasses.replace(settings, nats_url=nats.start())
        os.environ["NATS_URL"] = settings.nats_url or ""
        print(f"{'nats':12} {settings.nats_url} (embedded, store {nats.store_dir})", flush=True)
    try:
        if GATEWAY in roles and workers > 1:
            _serve_multi(settings, roles, workers)
        else:
            # The same loop uvicorn picks for its own runs (loop="uvloop" below): this process
            # runs the server itself, so it has to choose the loop.
            with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
                runner.run(_serve_single(settings, roles, clock, nats))
    finally:
        if nats:
            nats.stop()


def _refuse_taken_ports(settings: Settings, roles: list[str]) -> None:
    """Stop before anything starts when a port to serve is taken: by then the embedded NATS and
    the background roles would already be running against the data dir of another service."""
    wanted = {GATEWAY: ("REST", settings.http_port), "grpc": ("gRPC", settings.grpc_port)}
    for role, (what, port) in wanted.items():
        if role not in roles:
            continue
        family, kind, proto, _, address = socket.getaddrinfo(
            settings.host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        with socket.socket(family, kind, proto) as probe:
            # As the servers bind: a port in TIME_WAIT is free to them.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                where = host_port(settings.host, port)
                raise SystemExit(f"partner-api serve: {what} port {where}: {exc.strerror}") from None


async def _serve_single(
    settings: Settings, roles: list[str], clock: Clock | None, nats: EmbeddedNats | None = None
) -> None:
    container = Container.build(settings, clock)
    # Like every CLI command, one stderr line names the store; once it opened, so that a
    # store it cannot reach stays a one-line failure.
    where = f"{store_label(settings)} (deployment {container.deployment_id})"
    print(f"partner-api: serving store {where}", file=sys.stderr, flush=True)
    if nats is not None:
        container.extras["embedded_nats"] = nats  # readiness reads its JetStream probe
        nats.publish_failed_at = lambda: container.storage_health.failed_at("nats")
    try:
        if GATEWAY in roles:
            server, running = build_server(container, roles)
            # Announced once the port listens, from a task the lifespan starts, where uvicorn
            # already handles SIGTERM: a caller that connects, or stops the server, as soon as
            # it reads the line finds it listening, or gets a clean exit.
            running.announce = (
                f"{'gateway':12} http://{host_port(settings.host, settings.http_port)}{BASE_PATH}"
            )
            _let_sigterm_return()
            await server.serve()
        else:
            running = RunningRoles(container, roles)
            await running.start()
            settle_after_start()
            await _wait_for_signal()
            await running.stop()
    finally:
        container.close()


def _let_sigterm_return() -> None:
    """uvicorn stops gracefully on SIGTERM, then raises it again once `serve()` returns; under
    the default disposition that kills the process before the `finally` blocks close the
    stores and stop the embedded nats-server (left to linger seconds on its death signal).
    The server has stopped by then, so the repeated signal needs no action: ignore it."""
    signal.signal(signal.SIGTERM, lambda _sig, _frame: None)


async def _wait_for_signal() -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()


def background_processes(roles: list[str]) -> list[list[str]]:
    """The background roles of a layout of several processes, one process each, so that each
    can run on a core of its own (one interpreter runs Python on one core at a time). The
    worker's parts wait on time, not on the CPU, and join another role's process: the import,
    pool and swap workers the projections' where it runs here (their jobs wake them as those
    read models apply them, which only the applying process sees), the rest the worker's."""
    hosts: dict[str, str] = {}
    for part in WORKER_PARTS:
        wakes_on_read_models = part in READ_MODEL_WORKERS and "projections" in roles
        host = "projections" if wakes_on_read_models else "worker"
        if host in roles and part in roles:
            hosts[part] = host
    groups = [[role] for role in roles if role != GATEWAY and role not in hosts]
    for group in groups:
        group.extend(part for part in roles if hosts.get(part) == group[0])
    return groups


def _serve_multi(settings: Settings, roles: list[str], workers: int) -> None:
    """N gateway processes (uvicorn workers) plus a process for each background role."""
    children: list[subprocess.Popen[bytes]] = []
    child_env = os.environ.copy()  # the background roles count nothing into the gateways' files
    # Each worker counts its requests into this directory; a scrape adds them all up. Set
    # before uvicorn starts the workers, which read it when they first import the client.
    counts = tempfile.mkdtemp(prefix="partner-api-metrics-")
    os.environ[metrics.MULTIPROCESS_DIR] = counts
    os.environ[metrics.WORKERS_MARK] = str(workers)
    try:
        for group in background_processes(roles):
            args = [sys.executable, "-m", "cli.main", "serve"]
            for role in group:
                args += ["--role", role]
            children.append(subprocess.Popen(args, env=child_env))
        print(
            f"{'gateway':12} http://{host_port(settings.host, settings.http_port)}{BASE_PATH} "
            f"({workers} workers)",
            flush=True,
        )
        uvicorn.run(
            "runtime.asgi:app",
            factory=True,
            host=settings.host,
            port=settings.http_port,
            workers=workers,
            log_level="warning",
            access_log=False,
            # By its path: each worker process reads the limits from the environment.
            http="runtime.http_edge:BoundedHttpToolsProtocol",
            timeout_keep_alive=settings.http_keep_alive_seconds,
        )
    finally:
        shutil.rmtree(counts, ignore_errors=True)
        _stop_all(children)


def _stop_all(children: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM to each, then a kill for any that has not stopped within 10 s."""
    for child in children:
        child.terminate()
    for child in children:
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def gateway_only_app() -> Any:
    container = Container.build(Settings.from_env())
    app = create_app(container)
    settle_after_start()
    return app
