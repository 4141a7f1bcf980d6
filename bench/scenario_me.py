"""Issue 2: GET /me through the whole stack against a bare Litestar app, same server and load."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from bench.harness import PeakSampler, bench_key, running_bare_app, running_service
from bench.loadgen import build_request, run_load

SECONDS = float(os.environ.get("BENCH_SECONDS", "10"))
CONNECTIONS = 32


def run() -> dict[str, Any]:
    with running_bare_app() as port:
        asyncio.run(run_load("127.0.0.1", port, build_request("GET", "/partner/v1/me"), 1, 4))
        bare = asyncio.run(
            run_load("127.0.0.1", port, build_request("GET", "/partner/v1/me"), SECONDS,
                     CONNECTIONS)
        )
    with running_service() as (port, env, pid):
        secret = bench_key(env)
        request = build_request("GET", "/partner/v1/me", {"Authorization": f"Bearer {secret}"})
        asyncio.run(run_load("127.0.0.1", port, request, 1, 4))
        with PeakSampler(pid) as sampler:
            ours = asyncio.run(run_load("127.0.0.1", port, request, SECONDS, CONNECTIONS))
    ratio = ours.rps / bare.rps if bare.rps else 0.0
    return {
        "scenario": "GET /me vs bare Litestar (uvicorn, 1 worker, same load generator)",
        "service": ours.summary(),
        "bare": bare.summary(),
        "ratio": round(ratio, 3),
        "target_ratio": 0.70,
        "ratio_met": ratio >= 0.70,
        "peak_rss_mib_all_roles": round(sampler.peak_kib / 1024, 1),
        "target_rss_mib": 250,
        "rss_met": sampler.peak_kib / 1024 < 250,
    }
