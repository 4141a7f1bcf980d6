"""A started service process moves what it built out of the garbage collector's sight and
collects its youngest generation less often (runtime/heap.py): full collections had stopped
processes for hundreds of milliseconds under load."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from runtime.heap import YOUNG_THRESHOLD

PROBE = (
    "import gc, json\n"
    "from runtime.serve import gateway_only_app\n"
    "before = gc.get_freeze_count()\n"
    "gateway_only_app()\n"
    "print(json.dumps({'before': before, 'frozen': gc.get_freeze_count(),"
    " 'threshold': gc.get_threshold()[0]}))\n"
)


def test_a_gateway_worker_settles_its_heap_once_built(tmp_path: Path) -> None:
    env = {**os.environ, "PARTNER_API_DATA_DIR": str(tmp_path), "PARTNER_API_DATABASE_URL": ""}
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120,
        check=True,
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["before"] == 0
    # Everything the app was built from: modules, classes, routes; many thousands of objects.
    assert found["frozen"] > 10_000
    assert found["threshold"] == YOUNG_THRESHOLD
