"""POST /domains/availability with 50 names against GET /me, same service and load."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from bench.harness import bench_key, running_service
from bench.loadgen import build_request, run_load

SECONDS = float(os.environ.get("BENCH_SECONDS", "10"))
CONNECTIONS = 32
NAMES = [
    f"bench{i}{'taken' if i % 7 == 0 else ''}.{('com', 'io', 'net')[i % 3]}" for i in range(50)
]


def run() -> dict[str, Any]:
    with running_service() as (port, env, _pid):
        auth = {"Authorization": f"Bearer {bench_key(env)}"}
        me = build_request("GET", "/partner/v1/me", auth)
        body = json.dumps({"domains": NAMES}).encode()
        check = build_request("POST", "/partner/v1/domains/availability", auth, body)
        asyncio.run(run_load("127.0.0.1", port, me, 1, 4))
        asyncio.run(run_load("127.0.0.1", port, check, 1, 4))
        baseline = asyncio.run(run_load("127.0.0.1", port, me, SECONDS, CONNECTIONS))
        ours = asyncio.run(run_load("127.0.0.1", port, check, SECONDS, CONNECTIONS))
    ratio = ours.rps / baseline.rps if baseline.rps else 0.0
    return {
        "scenario": "POST /domains/availability (50 names) vs GET /me, same service and load",
        "availability": ours.summary(),
        "me": baseline.summary(),
        "ratio": round(ratio, 3),
        "target_ratio": 0.5,
        "ratio_met": ratio >= 0.5,
    }
