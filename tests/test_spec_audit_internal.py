"""The internal side against decisions.md sections 1 and 2: `audit replay` after a forwarding job
on a detached domain, the outbox backlog metric while NATS is away, `serve` stopping its
embedded nats-server before it exits on SIGTERM, and `PARTNER_API_HOST` as an IPv6 literal."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import httpx
import pytest
from conftest import RunningService, ServiceFactory, free_port
from grpc_health.v1 import health_pb2, health_pb2_grpc
from test_orders_sandbox import settled as settled_order
from test_swaps import settled
from webhook_receiver import wait_until

from infra.nats_server import EmbeddedNats
from infra.settings import host_port

CLI = [sys.executable, "-m", "cli.main"]


def _sandbox_order(partner: httpx.Client) -> dict:  # type: ignore[type-arg]
    workspace = partner.post(
        "/workspaces",
        json={"name": "Out", "provider": "u", "credentials": {"api_key": "wk_audit_1"}},
        headers={"Idempotency-Key": str(uuid.uuid4())},
    )
    assert workspace.status_code == 201, workspace.text
    order = partner.post(
        "/orders",
        json={
            "destination": {"workspace_id": workspace.json()["data"]["workspace_id"]},
            "suite_a": {"domains": 1, "inboxes_per_domain": 1},
        },
        headers={"Idempotency-Key": str(uuid.uuid4())},
    )
    return settled_order(partner, order)


def test_cli_replay_is_identical_after_forwarding_a_domain_a_swap_detached(
    service: RunningService, service_env: dict[str, str]
) -> None:
    partner = service.partner()
    order = _sandbox_order(partner)
    old = order["domains"][0]["domain"]
    swap = partner.post("/swaps", json={"order_id": order["id"], "domain": old, "type": "standard"})
    assert settled(partner, swap)["status"] == "completed"
    forwarding = partner.post(
        "/domains/forwarding", json={"domains": [old], "forwarding_url": "https://example.com"}
    )
    assert forwarding.status_code == 201, forwarding.text
    job = f"/domains/forwarding/jobs/{forwarding.json()['data']['id']}"
    wait_until(lambda: partner.get(job).json()["data"]["status"] == "completed")
    service.wait_projections()
    env = {**os.environ, **service_env, "PARTNER_API_GRPC_PORT": "1"}
    done = subprocess.run(
        [*CLI, "audit", "replay"], env=env, capture_output=True, text=True, timeout=120
    )
    # The forked replay gives each process only its models' tables: one model writing another's
    # table crashed it ("no such table: domains") or lost the row's forwarding URL.
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["identical"] is True and report["processes"] == 2, report


def _metric(service: RunningService, name: str) -> float:
    text = httpx.get(f"{service.base_url}/metrics", timeout=10).text
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} not in /metrics")


def _until(check: object, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.1)


def test_outbox_backlog_counts_what_waits_while_nats_is_away(
    service_factory: ServiceFactory, tmp_path: Path
) -> None:
    nats = EmbeddedNats(tmp_path)
    url = nats.start()
    assert nats.process is not None
    try:
        service = service_factory(
            roles=["gateway", "projections", "publisher", "worker"], nats_url=url
        )
        backlog = "partner_api_outbox_backlog_events"
        _until(lambda: _metric(service, backlog) == 0)
        nats.process.send_signal(signal.SIGSTOP)
        try:
            partner = service.partner()
            _sandbox_order(partner)
            _sandbox_order(partner)
            # Each sandbox order stores two public events (placed, completed) that wait for
            # NATS: all four count, not just the batch being published (or none, as before).
            assert _metric(service, backlog) >= 4
        finally:
            nats.process.send_signal(signal.SIGCONT)
        _until(lambda: _metric(service, backlog) == 0, seconds=30)
    finally:
        nats.stop()


def test_webhook_attempt_series_exist_before_any_attempt(
    service_factory: ServiceFactory, tmp_path: Path
) -> None:
    nats = EmbeddedNats(tmp_path)
    url = nats.start()
    try:
        service = service_factory(roles=["gateway", "projections", "dispatcher"], nats_url=url)
        text = httpx.get(f"{service.base_url}/metrics", timeout=10).text
        for outcome in ("success", "failure"):
            assert f'partner_api_webhook_attempts_total{{outcome="{outcome}"}}' in text, text
    finally:
        nats.stop()


def _children(pid: int) -> list[tuple[int, str]]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name, rest = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :]
        if int(rest.split()[1]) == pid:
            found.append((int(entry.name), name))
    return found


@contextmanager
def _serve(tmp_path: Path, *args: str, **env: str) -> Iterator[tuple[subprocess.Popen[str], list[str]]]:
    proc_env = {
        **os.environ,
        "PARTNER_API_DATA_DIR": str(tmp_path / "var"),
        "PARTNER_API_HTTP_PORT": str(free_port()),
        "PARTNER_API_GRPC_PORT": str(free_port()),
        **env,
    }
    proc_env.pop("NATS_URL", None)
    process = subprocess.Popen(
        [*CLI, "serve", *args], env=proc_env, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    lines: list[str] = []
    try:
        while not any(line.startswith("gateway") for line in lines):
            line = process.stdout.readline()
            assert line, f"serve exited: {lines}"
            lines.append(line.strip())
        yield process, lines
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_sigterm_stops_the_embedded_nats_before_serve_exits(tmp_path: Path) -> None:
    with _serve(tmp_path, "--role", "gateway", "--role", "publisher") as (process, lines):
        assert any(line.startswith("nats") and ":4222 " not in line for line in lines), lines
        (nats_pid,) = [pid for pid, name in _children(process.pid) if name == "nats-server"]
        process.send_signal(signal.SIGTERM)
        # uvicorn re-raised the SIGTERM once stopped, which killed the process before its
        # `finally` stopped nats-server (exit 143, nats-server alive for seconds after).
        assert process.wait(timeout=30) == 0
        assert not Path(f"/proc/{nats_pid}").exists()


def test_serve_starts_its_embedded_nats_again_when_it_dies(tmp_path: Path) -> None:
    """Killed under the service, the embedded nats-server comes back on its port and store:
    readiness returns without a restart of the service (webhooks stopped for good before)."""
    port = free_port()
    roles = ("--role", "gateway", "--role", "publisher")
    with _serve(tmp_path, *roles, PARTNER_API_HTTP_PORT=str(port)) as (process, _):
        url = f"http://127.0.0.1:{port}/readyz"
        wait_until(lambda: httpx.get(url).status_code == 200, timeout=30)
        (first,) = [pid for pid, name in _children(process.pid) if name == "nats-server"]
        os.kill(first, signal.SIGKILL)

        def back() -> bool:
            again = [pid for pid, name in _children(process.pid) if name == "nats-server"]
            return bool(again) and again != [first] and httpx.get(url).status_code == 200

        wait_until(back, timeout=30)
        assert httpx.get(url).json()["checks"]["nats"] == "ok"


def test_make_runs_serve_so_that_it_stops_when_make_dies(tmp_path: Path) -> None:
    makefile = (Path(__file__).parent.parent / "Makefile").read_text()
    assert "PARTNER_API_STOP_WITH_PARENT=1" in makefile.split("\nrun:", 1)[1].split("\n\n", 1)[0]
    env = {
        **os.environ,
        "PARTNER_API_STOP_WITH_PARENT": "1",
        "PARTNER_API_DATA_DIR": str(tmp_path / "var"),
        "PARTNER_API_HTTP_PORT": str(free_port()),
        "PARTNER_API_GRPC_PORT": str(free_port()),
    }
    env.pop("NATS_URL", None)
    # A parent that, like make on SIGTERM, dies without passing the signal on (`; true` keeps
    # the shell from exec-ing the command).
    command = " ".join([*CLI, "serve", "--role", "gateway", "--role", "publisher"]) + "; true"
    parent = subprocess.Popen(["sh", "-c", command], env=env)
    deadline = time.monotonic() + 60
    # Wait for the nats-server child by name: serve may start short-lived children too.
    nats_pids: list[int] = []
    while not nats_pids:
        assert time.monotonic() < deadline, "serve did not start its nats-server"
        time.sleep(0.2)
        serving = _children(parent.pid)
        serve_pid = serving[0][0] if serving else 0
        nats_pids = [pid for pid, name in _children(serve_pid) if name == "nats-server"]
    nats_pid = nats_pids[0]
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 30
    while Path(f"/proc/{serve_pid}").exists() or Path(f"/proc/{nats_pid}").exists():
        assert time.monotonic() < deadline, "serve outlived its parent"
        time.sleep(0.2)


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
        return True
    except OSError:
        return False


def test_host_port_brackets_ipv6_literals() -> None:
    assert host_port("127.0.0.1", 80) == "127.0.0.1:80"
    assert host_port("::1", 80) == "[::1]:80"
    assert host_port("::", 80) == "[::]:80"
    assert host_port("[::1]", 80) == "[::1]:80"


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback")
def test_an_ipv6_host_binds_rest_and_grpc(tmp_path: Path) -> None:
    args = ("--role", "gateway", "--role", "grpc")
    with _serve(tmp_path, *args, PARTNER_API_HOST="::1") as (process, lines):
        while not any(line.startswith("grpc") for line in lines):
            lines.append((process.stdout.readline() if process.stdout else "").strip())
        gateway = next(line for line in lines if line.startswith("gateway")).split()[1]
        assert gateway.startswith("http://[::1]:"), lines
        assert httpx.get(gateway.removesuffix("/partner/v1") + "/healthz").status_code == 200
        target = next(line for line in lines if line.startswith("grpc")).split()[1]
        with grpc.insecure_channel(target.removeprefix("grpc://")) as channel:
            check = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=10
            )
        assert check.status == health_pb2.HealthCheckResponse.SERVING
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
