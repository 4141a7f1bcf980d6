"""The sustained load of the orders benchmark: `wrk` (C, one thread) with `bench/orders.lua`, so
the load generator takes little of the two cores the service runs on; and the CPU time each
process of the run spends, read from /proc."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.scenario_mixed import API, Tenant

SCRIPT = Path(__file__).with_name("orders.lua")


@dataclass
class WrkRun:
    requests: int
    errors: int
    seconds: float
    cpu_seconds: float  # wrk's own, user + system
    p50_ms: float
    p99_ms: float


def wrk_binary() -> str:
    found = shutil.which("wrk")
    if found is None:
        raise RuntimeError("wrk is not installed: `make bench` installs the Debian package")
    return found


def run_wrk(base_url: str, tenants: list[Tenant], seconds: float, connections: int) -> WrkRun:
    """`connections` kept-alive connections POSTing orders back to back for `seconds`."""
    env = {
        **os.environ,
        "BENCH_WRK_PATH": f"{API}/orders",
        "BENCH_WRK_TENANTS": ";".join(f"{t.secret} {t.workspace_id}" for t in tenants),
        "BENCH_WRK_RUN": uuid.uuid4().hex[:12],
    }
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(
            [wrk_binary(), "-t1", f"-c{connections}", f"-d{seconds:g}s", "--timeout", "60s",
             "-s", str(SCRIPT), base_url],
            env=env, stdout=out, stderr=subprocess.DEVNULL,
        )
        # wait4 rather than wait: it also gives the CPU time wrk used.
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        lines = out.read().decode().splitlines()
    if process.returncode != 0 or not lines:
        raise RuntimeError(f"wrk failed ({process.returncode}): {lines[-5:]}")
    figures = json.loads(lines[-1])
    return WrkRun(figures["requests"], figures["errors"], figures["seconds"],
                  usage.ru_utime + usage.ru_stime, figures["p50_ms"], figures["p99_ms"])


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process, every thread."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def context_switches(pid: int) -> int:
    """Voluntary and involuntary context switches of a process's live threads: how often it
    went to sleep (waiting for a lock, a socket, a thread) or was taken off a core."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            lines = (task / "status").read_text().splitlines()
        except OSError:
            continue  # the thread ended meanwhile
        total += sum(int(line.split()[1]) for line in lines if "ctxt_switches" in line)
    return total


def children_of(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


def service_processes(pid: int) -> list[int]:
    """The service's process and every process it started but its embedded nats-server (the
    gateway workers and background roles of a layout of several processes)."""
    found = [pid]
    for child in children_of(pid):
        if Path(f"/proc/{child}/comm").read_text().strip() != "nats-server":
            found += service_processes(child)
    return found


def process_label(pid: int) -> str:
    """A service process by what it runs: its `--role`s, else the gateway (uvicorn's workers)."""
    try:
        args = Path(f"/proc/{pid}/cmdline").read_text().split("\0")
    except OSError:
        return "ended"
    roles = [args[i + 1] for i, arg in enumerate(args[:-1]) if arg == "--role"]
    if roles:
        return "+".join(roles)
    return "gateway" if "multiprocessing" in " ".join(args) else "main"


def child_named(pid: int, name: str) -> int | None:
    """A child process of `pid` by its command name (the service's embedded nats-server)."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            if Path(f"/proc/{child}/comm").read_text().strip() == name:
                return int(child)
    return None


def postgres_processes() -> list[int]:
    """Every PostgreSQL server process on the machine (the bench runs alone on it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == "postgres":
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


class CpuMeter:
    """CPU seconds of named groups of processes between `start` and `stop`: each group is
    listed afresh at both ends, so a process started meanwhile counts from its start."""

    def __init__(self, groups: dict[str, Callable[[], list[int]]]) -> None:
        self.groups = groups
        self._before: dict[str, dict[int, float]] = {}
        self.used: dict[str, float] = {}
        self.by_pid: dict[str, dict[int, float]] = {}
        self._switches_before: dict[str, int] = {}
        self.switches: dict[str, int] = {}

    def start(self) -> None:
        for name, listed in self.groups.items():
            pids = listed()
            self._before[name] = _cpu_by_pid(pids)
            self._switches_before[name] = _switches(pids)

    def stop(self) -> dict[str, float]:
        self.used = {}
        for name, listed in self.groups.items():
            pids = listed()
            before = self._before[name]
            now = _cpu_by_pid(pids)
            self.by_pid[name] = {pid: cpu - before.get(pid, 0.0) for pid, cpu in now.items()}
            self.used[name] = sum(self.by_pid[name].values())
            self.switches[name] = _switches(pids) - self._switches_before[name]
        return self.used


def _switches(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            total += context_switches(pid)
        except OSError:
            continue  # ended meanwhile
    return total


def _cpu_by_pid(pids: list[int]) -> dict[int, float]:
    found = {}
    for pid in pids:
        try:
            found[pid] = cpu_seconds(pid)
        except OSError:
            continue  # ended meanwhile
    return found


class FlushCounter:
    """fsync and fdatasync calls of a process (every thread it has when counting starts),
    counted by `perf stat` on the kernel's syscall tracepoints: the durable commits SQLite made.
    Counts nothing (None) where perf or its tracepoints are not available."""

    EVENTS = "syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync"

    def __init__(self, pids: list[int]) -> None:
        self.pids = pids
        self._process: subprocess.Popen[bytes] | None = None
        self._out = Path(tempfile.mkstemp(prefix="bench-flushes-")[1])

    def start(self) -> None:
        perf = shutil.which("perf")
        if perf is not None:
            self._process = subprocess.Popen(
                [perf, "stat", "-x,", "-o", str(self._out), "-e", self.EVENTS,
                 "-p", ",".join(map(str, self.pids))],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )

    def stop(self) -> int | None:
        if self._process is None:
            return None
        self._process.send_signal(signal.SIGINT)
        self._process.wait(timeout=30)
        counts = [line.split(",")[0] for line in self._out.read_text().splitlines()
                  if "syscalls:" in line]
        self._out.unlink(missing_ok=True)
        if not counts or not all(c.isdigit() for c in counts):
            return None
        return sum(int(c) for c in counts)
