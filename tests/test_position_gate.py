"""Read-your-writes waiters are woken once, when the position reaches their own target, not
on every move of it (`projections/position_gate.py`)."""

from __future__ import annotations

import threading
import time

from projections.position_gate import PositionGate


def _waiter(gate: PositionGate, target: int, results: dict[int, tuple[bool, float]]) -> threading.Thread:
    def run() -> None:
        results[target] = (gate.wait_for(target, timeout=5.0), time.monotonic())

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_each_waiter_goes_when_its_own_target_is_reached() -> None:
    gate = PositionGate()
    results: dict[int, tuple[bool, float]] = {}
    threads = [_waiter(gate, target, results) for target in (3, 7, 12)]
    while len(gate._waiting) < 3:
        time.sleep(0.001)
    gate.move_to(5)
    threads[0].join(timeout=5.0)
    assert results[3][0] and set(results) == {3}
    gate.move_to(6)  # short of the others' targets: they sleep on
    time.sleep(0.05)
    assert set(results) == {3}
    assert sorted(target for target, _, _ in gate._waiting) == [7, 12]
    moved_at = time.monotonic()
    gate.move_to(20)
    for thread in threads:
        thread.join(timeout=5.0)
    assert results[7][0] and results[12][0]
    assert results[7][1] >= moved_at and results[12][1] >= moved_at
    assert gate._waiting == []


def test_a_reached_target_answers_at_once_and_a_missed_one_leaves_no_trace() -> None:
    gate = PositionGate(10)
    assert gate.wait_for(10, timeout=0.0)
    started = time.monotonic()
    assert not gate.wait_for(11, timeout=0.1)
    assert time.monotonic() - started >= 0.1
    assert gate._waiting == []
    assert not gate.move_to(9, forward_only=True) and gate.position == 10
    assert gate.move_to(9) and gate.position == 9  # a follower told its stored position
