"""Child processes that must not outlive the process that started them."""

from __future__ import annotations

import ctypes
import os
import signal

PR_SET_PDEATHSIG = 1
# Looked up here, in the parent: loading a library after fork() in a process with other
# threads could wait forever on a loader lock one of them held at the fork.
_prctl = ctypes.CDLL("libc.so.6", use_errno=True).prctl


def die_with_parent(parent_pid: int, sig: int = signal.SIGTERM) -> None:
    """Ask the kernel to send `sig` to this process when its parent dies, however it dies
    (SIGKILL included); if the parent is already gone, go at once. SIGTERM lets a program
    such as nats-server close cleanly; a replay worker, which holds nothing, takes SIGKILL."""
    _prctl(PR_SET_PDEATHSIG, sig)
    if os.getppid() != parent_pid:
        os.kill(os.getpid(), sig)
