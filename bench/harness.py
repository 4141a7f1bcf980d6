"""Start the service or a baseline as a real process, measure it, stop it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_http(url: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=0.5)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer")


def tree_rss_peak_kib(pid: int) -> int:
    """Peak resident size (VmHWM) of a process and its children, in KiB."""
    total = 0
    pids = [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    for each in pids:
        try:
            for line in Path(f"/proc/{each}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1])
        except FileNotFoundError:
            continue
    return total


class PeakSampler:
    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak_kib = max(self.peak_kib, tree_rss_peak_kib(self.pid))
            self._stop.wait(0.2)

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak_kib = max(self.peak_kib, tree_rss_peak_kib(self.pid))


@contextmanager
def running_service(
    extra_env: dict[str, str] | None = None, serve_args: str = ""
) -> Iterator[tuple[int, dict[str, str], int]]:
    """The whole service, every role, embedded defaults (SQLite, its own nats-server), laid
    out as `serve_args` say (`--workers 2`), or as BENCH_SERVE_ARGS says when set."""
    data_dir = tempfile.mkdtemp(prefix="bench-")
    port = free_port()
    env = {
        **os.environ,
        "PARTNER_API_DATA_DIR": data_dir,
        "PARTNER_API_HTTP_PORT": str(port),
        "PARTNER_API_GRPC_PORT": str(free_port()),
        "PARTNER_API_ALLOW_HTTP_WEBHOOKS": "1",
        **(extra_env or {}),
    }
    env.pop("NATS_URL", None)
    # BENCH_SERVE_ARGS: other `serve` arguments, to measure another layout ("" for one process).
    process = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "serve",
         *os.environ.get("BENCH_SERVE_ARGS", serve_args).split()],
        env=env, stdout=subprocess.DEVNULL,
    )
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz")
        yield port, env, process.pid
    finally:
        process.terminate()
        process.wait(timeout=20)


@contextmanager
def running_bare_app(module: str = "bench.bare_app", env: dict[str, str] | None = None
                     ) -> Iterator[int]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", f"{module}:app", "--port", str(port),
         "--log-level", "warning", "--no-access-log", "--loop", "uvloop", "--http", "httptools"],
        stdout=subprocess.DEVNULL, env={**os.environ, **(env or {})},
    )
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz")
        yield port
    finally:
        process.terminate()
        process.wait(timeout=20)


def cli(env: dict[str, str], *args: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-m", "cli.main", *args], env=env, capture_output=True, text=True,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def bench_key(env: dict[str, str], environment: str = "test") -> str:
    org = cli(env, "org", "create", "Bench", "--rate-rps", "1000000000", "--rate-burst", "1000000000")
    key = cli(env, "key", "create", str(org["id"]), "--env", environment, "--preset", "full")
    return str(key["secret"])
