"""The CLI and several gateway processes against one store, as an operator runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import free_port
from test_orders_sandbox import wait_order

CLI = [sys.executable, "-m", "cli.main"]


def cli(env: dict[str, str], *args: str) -> dict:  # type: ignore[type-arg]
    done = subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, done.stdout
    return json.loads(lines[0])  # type: ignore[no-any-return]


def wait_listening(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert process.poll() is None, "server exited"
        try:
            if httpx.get(url + "/healthz", timeout=0.5).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise AssertionError("server did not come up")


@pytest.fixture
def gateways(service_env: dict[str, str]) -> Iterator[tuple[dict[str, str], list[str]]]:
    env = {**os.environ, **service_env}
    processes, urls = [], []
    for _ in range(2):
        port = free_port()
        proc_env = {**env, "PARTNER_API_HTTP_PORT": str(port)}
        args = [*CLI, "serve", "--role", "gateway"]
        processes.append(subprocess.Popen(args, env=proc_env, stdout=subprocess.DEVNULL))
        urls.append(f"http://127.0.0.1:{port}")
    try:
        for url, process in zip(urls, processes, strict=True):
            wait_listening(url, process)
        yield env, urls
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=10)


def test_cli_keys_work_and_revoke_while_server_runs(
    gateways: tuple[dict[str, str], list[str]],
) -> None:
    env, (url, _) = gateways
    org = cli(env, "org", "create", "Acme")
    assert org["id"].startswith("org_") and org["name"] == "Acme"
    key = cli(env, "key", "create", org["id"], "--env", "test", "--preset", "full")
    assert key["secret"].startswith("pk_test_")
    headers = {"Authorization": f"Bearer {key['secret']}"}
    me = httpx.get(f"{url}/partner/v1/me", headers=headers)
    assert me.status_code == 200 and me.json()["data"]["partner"]["id"] == org["id"]
    assert cli(env, "key", "revoke", key["id"]) == {"id": key["id"], "revoked": True}
    assert httpx.get(f"{url}/partner/v1/me", headers=headers).status_code == 401


def test_cli_errors_are_one_line_on_stderr(service_env: dict[str, str]) -> None:
    env = {**os.environ, **service_env}
    for args in (["key", "revoke", "key_nope"], ["serve", "--workers", "0"]):
        done = subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode != 0, args
        assert done.stdout == ""
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_two_gateway_processes_share_one_allowance(
    gateways: tuple[dict[str, str], list[str]],
) -> None:
    env, urls = gateways
    org = cli(env, "org", "create", "Shared", "--rate-rps", "0.01", "--rate-burst", "10")
    key = cli(env, "key", "create", org["id"], "--env", "test", "--preset", "read")
    headers = {"Authorization": f"Bearer {key['secret']}"}
    statuses = [
        httpx.get(f"{urls[i % 2]}/partner/v1/me", headers=headers).status_code for i in range(20)
    ]
    assert statuses.count(200) == 10
    assert statuses.count(429) == 10
    assert set(statuses[10:]) == {429}


def test_embedded_nats_started_and_stopped(tmp_path: Path) -> None:
    from infra.nats_server import EmbeddedNats

    nats = EmbeddedNats(tmp_path)
    url = nats.start()
    try:
        assert url.startswith("nats://127.0.0.1:") and not url.endswith(":4222")
        assert (tmp_path / "nats").is_dir()
    finally:
        nats.stop()
    assert nats.process is not None and nats.process.poll() is not None


def test_embedded_nats_dies_with_a_killed_service(tmp_path: Path) -> None:
    script = (
        "import time, sys; from pathlib import Path; from infra.nats_server import EmbeddedNats;"
        f"n = EmbeddedNats(Path({str(tmp_path)!r})); n.start(); print(n.process.pid, flush=True);"
        "time.sleep(60)"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child_pid = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 30
    status = process_status(child_pid)
    while status and "State:\tZ" not in status and time.monotonic() < deadline:
        time.sleep(0.1)
        status = process_status(child_pid)
    assert not status or "State:\tZ" in status


def process_status(pid: int) -> str:
    """/proc status of the process, or "" once it is gone (it may vanish while being read)."""
    try:
        return Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return ""


@pytest.mark.parametrize("nats_url", ["nothing listens", "malformed"])
def test_webhook_roles_do_not_hold_the_start_while_nats_is_down(
    service_env: dict[str, str], nats_url: str
) -> None:
    """NATS unreachable (or its URL wrong): the gateway in the same process serves and says
    not ready, and SIGTERM stops the process cleanly (the webhook roles connect in the
    background, retrying)."""
    port = free_port()
    url = f"nats://127.0.0.1:{free_port()}" if nats_url == "nothing listens" else "nats://a:b:c"
    env = {**os.environ, **service_env, "PARTNER_API_HTTP_PORT": str(port), "NATS_URL": url}
    args = [*CLI, "serve", "--role", "gateway", "--role", "publisher", "--role", "dispatcher"]
    process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_listening(url, process)
        ready = httpx.get(f"{url}/readyz")
        assert ready.status_code == 503 and ready.json()["checks"]["nats"].startswith("error")
        process.terminate()
        assert process.wait(timeout=15) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _requests_to_me(metrics_text: str) -> float:
    prefix = 'partner_api_requests_total{method="GET",route="/partner/v1/me",status="200"}'
    lines = [line for line in metrics_text.splitlines() if line.startswith(prefix)]
    return float(lines[0].rsplit(" ", 1)[1]) if lines else 0.0


def test_metrics_add_up_every_gateway_worker(service_env: dict[str, str]) -> None:
    """decisions.md 1: request counts by route and status. Behind one port, `--workers 2` is
    two processes; any scrape counts the requests both answered, never one worker's share."""
    env = {**os.environ, **service_env, "PARTNER_API_HTTP_PORT": str(free_port())}
    org = cli(env, "org", "create", "Metered")
    secret = cli(env, "key", "create", org["id"], "--env", "test", "--preset", "full")["secret"]
    url = f"http://127.0.0.1:{env['PARTNER_API_HTTP_PORT']}"
    process = subprocess.Popen([*CLI, "serve", "--role", "gateway", "--workers", "2"], env=env,
                               stdout=subprocess.DEVNULL)
    try:
        wait_listening(url, process)
        headers = {"Authorization": f"Bearer {secret}"}
        for _ in range(40):  # new connections, so both workers answer some
            assert httpx.get(f"{url}/partner/v1/me", headers=headers).status_code == 200
        scrapes = {_requests_to_me(httpx.get(f"{url}/metrics").text) for _ in range(6)}
        assert scrapes == {40.0}
        text = httpx.get(f"{url}/metrics").text
        assert "partner_api_projection_lag_events" in text
        assert "partner_api_webhook_attempts_total" in text
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_serve_stops_before_starting_anything_when_its_port_is_taken(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {**os.environ, "PARTNER_API_DATA_DIR": str(tmp_path), "PARTNER_API_HTTP_PORT": str(port),
               "PARTNER_API_GRPC_PORT": str(free_port()), "PARTNER_API_DATABASE_URL": ""}
        env.pop("NATS_URL", None)
        done = subprocess.run([*CLI, "serve"], env=env, capture_output=True, text=True,
                              timeout=60)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        f"partner-api serve: REST port 127.0.0.1:{port}: Address already in use"]
    assert not (tmp_path / "nats").exists()  # no embedded nats-server was started


def test_the_roles_decisions_names_run_every_kind_of_work(service_env: dict[str, str]) -> None:
    """decisions.md 2 names gateway, grpc, projections, publisher, dispatcher and worker: a
    deployment of just those finishes swaps and queued imports too (`worker` runs them)."""
    env = {**os.environ, **service_env, "PARTNER_API_HTTP_PORT": str(free_port())}
    org = cli(env, "org", "create", "Six roles")
    secret = cli(env, "key", "create", org["id"], "--env", "test", "--preset", "full")["secret"]
    url = f"http://127.0.0.1:{env['PARTNER_API_HTTP_PORT']}/partner/v1"
    args = [*CLI, "serve", "--role", "gateway", "--role", "projections", "--role", "worker"]
    process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL)
    try:
        wait_listening(url.removesuffix("/partner/v1"), process)
        client = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {secret}"})
        workspace = client.post(
            "/workspaces", json={"provider": "u", "credentials": {"api_key": "k"}},
            headers={"Idempotency-Key": "six-w"}).json()["data"]["workspace_id"]
        order = client.post("/orders", headers={"Idempotency-Key": "six-o"}, json={
            "destination": {"workspace_id": workspace},
            "suite_a": {"domains": 1, "inboxes_per_domain": 1}}).json()["data"]
        order = wait_order(client, order["id"])  # the worker role completes it
        swap = client.post("/swaps", json={"order_id": order["id"], "type": "standard",
                                           "domain": order["domains"][0]["domain"]}).json()
        job = client.post("/domains/import/jobs", json={"domains": ["six-roles.com"]}).json()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            done = (client.get(f"/swaps/{swap['data']['id']}").json()["data"]["status"],
                    client.get(f"/domains/import/jobs/{job['data']['id']}").json()["data"]["status"])
            if done == ("completed", "completed"):
                break
            time.sleep(0.2)
        assert done == ("completed", "completed")
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_serve_that_cannot_reach_its_store_says_so_in_one_line(tmp_path: Path) -> None:
    """decisions.md 2: every command exits non-zero with a one-line error, serve included."""
    env = {**os.environ, "PARTNER_API_DATA_DIR": str(tmp_path),
           "PARTNER_API_DATABASE_URL": f"postgresql://postgres@127.0.0.1:{free_port()}/none",
           "PARTNER_API_HTTP_PORT": str(free_port()), "PARTNER_API_GRPC_PORT": str(free_port())}
    done = subprocess.run([*CLI, "serve", "--role", "gateway"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("partner-api serve: OperationalError: ")
