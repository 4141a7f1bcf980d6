"""The orders benchmark's disk probe: flushes timed while the latency run goes on."""

from __future__ import annotations

import time
from pathlib import Path

from bench.flush_probe import FlushProbe


def test_the_probe_flushes_until_stopped_and_leaves_no_file(tmp_path: Path) -> None:
    with FlushProbe(tmp_path, interval=0.01) as probe:
        time.sleep(0.3)
    assert len(probe.flushes) >= 5
    assert all(ms >= 0 for _, ms in probe.flushes)
    assert not (tmp_path / "flush-probe").exists()
    counted = len(probe.flushes)
    time.sleep(0.05)
    assert len(probe.flushes) == counted  # stopped


def test_slow_flushes_are_told_with_their_time_in_the_run(tmp_path: Path) -> None:
    probe = FlushProbe(tmp_path)
    probe.flushes = [(100.0, 0.4), (101.5, 80.0), (102.0, 0.6), (103.25, 250.0)]
    figures = probe.figures(since=100.0)
    assert figures["flushes"] == 4
    assert figures["max"] == 250.0
    assert figures["over_50_ms_at_s"] == [[80.0, 1.5], [250.0, 3.25]]


def test_a_probe_that_never_flushed_says_so(tmp_path: Path) -> None:
    assert FlushProbe(tmp_path).figures(since=0.0) == {"flushes": 0}
