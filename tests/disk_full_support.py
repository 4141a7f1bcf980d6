"""A small disk of its own for a test (a tmpfs it mounts), filled and freed on purpose, and the
service run on it as an operator runs it: `partner-api serve` with its embedded nats-server."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from conftest import IN_CI, free_port

CLI = [sys.executable, "-m", "cli.main"]
_NOT_PERMITTED = ("not permitted", "permission denied", "must be superuser", "only root")


@contextlib.contextmanager
def small_tmpfs(where: Path, megabytes: int = 48) -> Iterator[Path]:
    """A tmpfs of `megabytes` mounted at `where` for the test. Skipped only where mounting is not
    permitted (no root, a container without CAP_SYS_ADMIN); any other failure fails the test."""
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs", str(where)],
        capture_output=True, text=True, check=False,
    )
    if done.returncode != 0:
        why = done.stderr.strip() or f"mount exited {done.returncode}"
        if os.geteuid() != 0 or any(words in why.lower() for words in _NOT_PERMITTED):
            pytest.skip(f"the disk-full test mounts a {megabytes} MB tmpfs; not permitted here: {why}")
        pytest.fail(f"mounting a tmpfs failed{' in CI' if IN_CI else ''}: {why}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path) -> Path:
    """Writes a file until the disk has no byte left; returns it (delete it to free the disk)."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as handle:
        for chunk in (1 << 20, 1 << 12, 1):
            try:
                while True:
                    handle.write(b"\0" * chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
    return filler


def children_of(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except FileNotFoundError:  # the thread ended between the listing and the read
            continue
    return found


def nats_child(pid: int) -> int:
    for child in children_of(pid):
        if b"nats-server" in Path(f"/proc/{child}/cmdline").read_bytes():
            return child
    raise AssertionError("the service runs no embedded nats-server")


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    env: dict[str, str]
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.env['PARTNER_API_HTTP_PORT']}"

    @property
    def grpc(self) -> str:
        return f"127.0.0.1:{self.env['PARTNER_API_GRPC_PORT']}"

    def ready(self) -> httpx.Response:
        return httpx.get(self.url + "/readyz", timeout=10.0)

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]


def _started(env: dict[str, str], log: Path, attempts: int = 3) -> Served:
    """`serve`, ready; started again on fresh ports when a parallel test took a free port
    between `free_port()` and the bind."""
    for _ in range(attempts):
        with open(log, "ab") as output:
            process = subprocess.Popen([*CLI, "serve"], env=env, stdout=output, stderr=output)
        served = Served(process, env, log)
        deadline = time.monotonic() + 90
        while process.poll() is None:
            with contextlib.suppress(httpx.HTTPError):
                if served.ready().status_code == 200:
                    return served
            assert time.monotonic() < deadline, f"serve never ready:\n{served.log_tail()}"
            time.sleep(0.2)
        if "Address already in use" not in served.log_tail():
            break
        env["PARTNER_API_HTTP_PORT"], env["PARTNER_API_GRPC_PORT"] = str(free_port()), str(free_port())
    raise AssertionError(f"serve exited:\n{served.log_tail()}")


@contextlib.contextmanager
def serve_embedded(data_dir: Path, logs: Path, **extra: str) -> Iterator[Served]:
    """`partner-api serve` (every role, embedded nats-server) with its data in `data_dir` and
    its output in `logs` (off the small disk, to read after it filled)."""
    env = {
        **os.environ,
        "PARTNER_API_DATA_DIR": str(data_dir),
        "PARTNER_API_HTTP_PORT": str(free_port()),
        "PARTNER_API_GRPC_PORT": str(free_port()),
        "PARTNER_API_SECRET_KEY": secrets.token_hex(32),
        "PARTNER_API_OPERATOR_TOKEN": "op_" + secrets.token_hex(16),
        "PARTNER_API_ALLOW_HTTP_WEBHOOKS": "1",
        "PARTNER_API_POLL_INTERVAL_SECONDS": "0.05",
        "PARTNER_API_FULFILLMENT_STEP_SECONDS": "0.2",
        "PARTNER_API_WEBHOOK_TIMEOUT_SECONDS": "3",
        "PARTNER_API_WEBHOOK_RETRY_SCHEDULE": "1,2,3,5",
        "PARTNER_API_OUTBOX_STUCK_SECONDS": "5",
        **extra,
    }
    env.pop("NATS_URL", None)  # the embedded nats-server, on the small disk
    logs.mkdir(parents=True, exist_ok=True)
    log = logs / "serve.log"
    served = _started(env, log)
    process = served.process
    try:
        yield served
    finally:
        with contextlib.suppress(ProcessLookupError, FileNotFoundError):
            for child in children_of(process.pid):
                os.kill(child, signal.SIGCONT)  # a stopped nats-server must be able to stop
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        nats_log = data_dir / "nats" / "nats-server.log"
        if nats_log.exists():  # kept beside the service's log: the small disk is unmounted
            shutil.copy(nats_log, logs / nats_log.name)
