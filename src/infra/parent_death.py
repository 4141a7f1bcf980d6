"""Child processes that must not outlive the process that started them."""

from __future__ import annotations

import ctypes
import os
import signal

PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int, sig: int = signal.SIGTERM) -> None:
    """Ask the kernel to send `sig` to this process when its parent dies, however it dies
    (SIGKILL included); if the parent is already gone, go at once."""
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, sig)
    if os.getppid() != parent_pid:
        os.kill(os.getpid(), sig)
