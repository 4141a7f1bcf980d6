"""The DKIM key pool (`adapters/dkim.py`): real keys, and a process that made one exits cleanly
(its filler thread was once killed inside OpenSSL at exit, aborting the process with 134)."""

from __future__ import annotations

import os
import subprocess
import sys

TAKE_ONE_AND_EXIT = "from adapters.dkim import dkim_record_value; dkim_record_value()"


def test_a_process_that_made_a_key_exits_cleanly() -> None:
    """Before the fix about one such process in six aborted: 24 at once all exit 0."""
    env = {**os.environ, "PYTHONPATH": "src"}
    processes = [subprocess.Popen([sys.executable, "-c", TAKE_ONE_AND_EXIT], env=env)
                 for _ in range(24)]
    assert [p.wait(timeout=120) for p in processes] == [0] * 24
