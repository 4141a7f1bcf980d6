"""A child forked for work on the parent's behalf (a replay worker, the embedded nats-server)
ends when the parent dies, even by SIGKILL: a replay worker reads SQLite under the parent's
locks and must not read on without them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

PARENT = """
import os, signal, sys, time
from infra.parent_death import die_with_parent
parent = os.getpid()
child = os.fork()
if child == 0:
    die_with_parent(parent, signal.SIGKILL)
    time.sleep(60)
    os._exit(0)
print(child, flush=True)
time.sleep(60)
"""


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[1][0] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False


def test_a_child_ends_when_its_parent_is_killed() -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": "src"})
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    time.sleep(0.2)
    assert alive(child)
    parent.send_signal(signal.SIGKILL)
    parent.wait(timeout=10)
    deadline = time.monotonic() + 30  # a loaded machine schedules the watcher late
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child)
