"""`audit replay` throughput into fresh read models against the raw rate of reading
the same notifications from the store, on SQLite and PostgreSQL, in one run.

The history is written straight through the aggregates (many per transaction); each store is
then measured in a child process of its own, so its peak resident size is the replay's alone.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import msgspec
import psycopg

from audit.records import read_notifications
from audit.replay import Replay, fresh_database
from domain.api_keys import ApiKey, hash_secret
from domain.bundles import Bundle
from domain.organizations import Organization
from domain.users import User
from infra.ids import public_id
from infra.settings import Settings
from runtime.container import Container
from services.catalog.bundles import _checked_terms
from services.catalog.commands import CreateBundle

EVENTS = int(os.environ.get("BENCH_REPLAY_EVENTS", "100000"))
EVENTS_PER_UNIT = 10
UNITS_PER_SAVE = 50
PG_URL = os.environ.get(
    "PARTNER_API_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test"
)
TARGET_RATIO = 0.30
ROUNDS = int(os.environ.get("BENCH_REPLAY_ROUNDS", "3"))
TARGET_RSS_MIB = 300


def _unit(n: int, now: float) -> list[Any]:
    """Ten events of the kinds the read models handle: an organization with a webhook test,
    three keys (one revoked), a bundle created and edited, two users."""
    org = Organization(name=f"Replay {n}", rate_rps=None, rate_burst=None, created_at=now)
    org.request_webhook_test(environment="test", requested_at=now)
    org_id = public_id("org", org.id)
    keys = [
        ApiKey(org_id=org_id, environment="test", preset="full",
               secret_hash=hash_secret(f"pk_test_{n}_{i}"), created_at=now)
        for i in range(3)
    ]
    keys[0].revoke(now)
    terms = CreateBundle(name=f"Bundle {n}", monthly_sending_volume=30_000 + n,
                         send_on_weekends=n % 2 == 0)
    clean, sizing = _checked_terms(terms)
    bundle = Bundle(org_id=org_id, environment="test", terms=msgspec.structs.asdict(clean),
                    sizing=sizing, created_at=now)
    clean, sizing = _checked_terms(msgspec.structs.replace(terms, monthly_sending_volume=60_000 + n))
    bundle.edit(msgspec.structs.asdict(clean), sizing, now)
    users = [
        User(org_id=org_id, environment="test", workspace_id=f"wsp_{n}", provider="suite_a",
             client_id=i, email=f"u{n}.{i}@example.com", first_name="Ada", last_name="Lovelace",
             created_at=now)
        for i in range(2)
    ]
    return [org, *keys, bundle, *users]


def write_history(settings: Settings, events: int) -> None:
    container = Container.build(settings)
    try:
        units = events // EVENTS_PER_UNIT
        now = time.time()
        for start in range(0, units, UNITS_PER_SAVE):
            batch = [a for n in range(start, min(units, start + UNITS_PER_SAVE))
                     for a in _unit(n, now)]
            container.store.save(*batch)
    finally:
        container.close()


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _raw_rate(store: Any, stop: int) -> tuple[int, float]:
    started = time.perf_counter()
    events = sum(len(batch) for batch in read_notifications(store, 0, stop=stop))
    return events, events / (time.perf_counter() - started)


def _replay_rate(settings: Settings, container: Container, stop: int,
                 progress: Any) -> tuple[int, float]:
    with fresh_database(settings) as target:
        started = time.perf_counter()
        rebuild = Replay(container.store, container.read_models, target)
        rebuild.advance(stop, progress)
        return rebuild.events, rebuild.events / (time.perf_counter() - started)


def measure(settings: Settings) -> dict[str, Any]:
    """In the child: ROUNDS rounds of the raw read rate then the replay rate (a single raw
    read swings up to 2x from one run to the next on a shared machine, so the ratio reported
    is the median of the rounds' ratios), with RSS half-way and at the end of the first."""
    container = Container.build(settings)
    try:
        store = container.store
        stop = store.recorder.max_notification_id() or 0
        # For the breakdown: the reads plus turning each notification into its event.
        started = time.perf_counter()
        for batch in read_notifications(store, 0, stop=stop):
            for notification in batch:
                store.mapper.to_domain_event(notification)
        decode_seconds = time.perf_counter() - started
        rss_half: list[float] = []

        def progress(position: int, end: int) -> None:
            if not rss_half and position >= end // 2:
                rss_half.append(_rss_mib())

        rounds = []
        for _ in range(ROUNDS):
            raw_events, raw_rate = _raw_rate(store, stop)
            replayed, replay_rate = _replay_rate(settings, container, stop, progress)
            if not rounds:
                rss_end = _rss_mib()
            rounds.append((replay_rate / raw_rate, raw_rate, replay_rate))
    finally:
        container.close()
    ratio, raw_rate, replay_rate = statistics.median_low(rounds)
    # The replay's own process, or the largest of the processes a first pass forks.
    peak = max(resource.getrusage(who).ru_maxrss
               for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)) / 1024
    return {
        "events": replayed,
        "raw_read_events_per_s": round(raw_rate),
        "read_and_decode_events_per_s": round(raw_events / decode_seconds),
        "replay_events_per_s": round(replay_rate),
        "ratio": round(ratio, 3),
        "round_ratios": [round(r[0], 3) for r in rounds],
        "target_ratio": TARGET_RATIO,
        "ratio_met": ratio >= TARGET_RATIO,
        "rss_mib_half_way": round(rss_half[0], 1) if rss_half else None,
        "rss_mib_end": round(rss_end, 1),
        "peak_rss_mib": round(peak, 1),
        "rss_met": peak < TARGET_RSS_MIB,
    }


def _measure_in_child(env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "bench.scenario_replay", "measure"],
        env=env, capture_output=True, text=True, check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _run_store(kind: str) -> dict[str, Any]:
    data_dir = tempfile.mkdtemp(prefix="bench-replay-")
    schema = f"bench_replay_{uuid.uuid4().hex[:12]}"
    env = {**os.environ, "PARTNER_API_DATA_DIR": data_dir}
    if kind == "postgres":
        env.update(PARTNER_API_DATABASE_URL=PG_URL, PARTNER_API_DATABASE_SCHEMA=schema,
                   PARTNER_API_DATABASE_POOL_SIZE="2")
    else:
        env.pop("PARTNER_API_DATABASE_URL", None)
    try:
        started = time.perf_counter()
        write_history(Settings.from_env(env), EVENTS)
        written = time.perf_counter() - started
        result = _measure_in_child(env)
        return {"store": kind, "history_write_seconds": round(written, 1), **result}
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
        if kind == "postgres":
            with psycopg.connect(PG_URL, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def run() -> dict[str, Any]:
    return {
        "scenario": f"audit replay into fresh read models vs raw notification reads, {EVENTS} "
        "events (orgs, keys, bundles, users, webhook tests)",
        "stores": [_run_store(kind) for kind in ("sqlite", "postgres")],
    }


if __name__ == "__main__" and sys.argv[1:] == ["measure"]:
    print(json.dumps(measure(Settings.from_env())))
