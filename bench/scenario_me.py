"""GET /me through the whole stack against a bare Litestar app, same server and load.

Both run at once and are measured in alternating rounds: on a shared machine the load of
others drifts within seconds, and a single back-to-back pair mostly measured that drift.
"""

from __future__ import annotations

import asyncio
import os
import statistics
from typing import Any

from bench.harness import PeakSampler, bench_key, running_bare_app, running_service
from bench.loadgen import LoadResult, build_request, run_load

SECONDS = float(os.environ.get("BENCH_SECONDS", "10"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "4"))
CONNECTIONS = 32


def _merged(results: list[LoadResult]) -> dict[str, Any]:
    merged = LoadResult(
        sum(r.requests for r in results),
        sum(r.errors for r in results),
        sum(r.seconds for r in results),
        [latency for r in results for latency in r.latencies],
    )
    summary = merged.summary()
    summary["rps_median_of_rounds"] = round(statistics.median(r.rps for r in results), 1)
    return summary


def run() -> dict[str, Any]:
    bare_request = build_request("GET", "/partner/v1/me")
    bare_rounds: list[LoadResult] = []
    our_rounds: list[LoadResult] = []
    with running_bare_app() as bare_port, running_service() as (port, env, pid):
        secret = bench_key(env)
        request = build_request("GET", "/partner/v1/me", {"Authorization": f"Bearer {secret}"})
        asyncio.run(run_load("127.0.0.1", bare_port, bare_request, 1, 4))
        asyncio.run(run_load("127.0.0.1", port, request, 1, 4))
        with PeakSampler(pid) as sampler:
            for _ in range(ROUNDS):
                seconds = SECONDS / ROUNDS
                bare_rounds.append(
                    asyncio.run(run_load("127.0.0.1", bare_port, bare_request, seconds,
                                         CONNECTIONS))
                )
                our_rounds.append(
                    asyncio.run(run_load("127.0.0.1", port, request, seconds, CONNECTIONS))
                )
    ratios = [o.rps / b.rps for o, b in zip(our_rounds, bare_rounds, strict=True) if b.rps]
    ratio = statistics.median(ratios) if ratios else 0.0
    return {
        "scenario": "GET /me vs bare Litestar (uvicorn, uvloop + httptools, 1 worker, same load "
        f"generator, {ROUNDS} alternating rounds)",
        "service": _merged(our_rounds),
        "bare": _merged(bare_rounds),
        "round_ratios": [round(r, 3) for r in ratios],
        "ratio": round(ratio, 3),
        "target_ratio": 0.70,
        "ratio_met": ratio >= 0.70,
        "peak_rss_mib_all_roles": round(sampler.peak_kib / 1024, 1),
        "target_rss_mib": 250,
        "rss_met": sampler.peak_kib / 1024 < 250,
    }
