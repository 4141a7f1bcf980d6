"""How long the disk took to flush a small write while the latency run went on.

Every order's answer waits for at least one durable commit (SQLite: the service's own
`fdatasync`; PostgreSQL: the server's WAL flush), and so does its completion. On a virtual
machine the flush itself now and then stalls for hundreds of milliseconds, whatever the
process asking: seen here with nothing else running, a 1.5 KB write and `fdatasync` every
10 ms took 0.4 ms at the median and up to 458 ms once a minute. Orders in flight during such a
stall take that long more, and a run of 200 orders at 20/s then misses its p99 through no
fault of the service. The probe writes and flushes like a commit does, ten times a second, on
the filesystem of the service's data, so that a slow order can be matched to a slow flush.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

BYTES = 1500  # about one order event, as a commit writes it
INTERVAL_SECONDS = 0.1
SLOW_MS = 50.0
SPAN_BYTES = 4 << 20  # written over in turn, like a write-ahead log that is reused


class FlushProbe:
    """A thread writing and flushing `BYTES` every `INTERVAL_SECONDS` into a file of `directory`."""

    def __init__(self, directory: Path, interval: float = INTERVAL_SECONDS) -> None:
        self.path = directory / "flush-probe"
        self.interval = interval
        self.flushes: list[tuple[float, float]] = []  # (unix time at start, ms)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="flush-probe", daemon=True)

    def __enter__(self) -> FlushProbe:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        self.path.unlink(missing_ok=True)

    def _run(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            offset = 0
            payload = b"\x5a" * BYTES
            while not self._stop.wait(self.interval):
                started, clock = time.time(), time.perf_counter()
                os.pwrite(fd, payload, offset)
                os.fdatasync(fd)
                self.flushes.append((started, (time.perf_counter() - clock) * 1000))
                offset = (offset + BYTES) % SPAN_BYTES
        finally:
            os.close(fd)

    def figures(self, since: float) -> dict[str, Any]:
        """Median and longest flush, and each slow one with its time in seconds after `since`
        (the time the run's first order was sent, as `slowest_ms_at_s` counts)."""
        if not self.flushes:
            return {"flushes": 0}
        took = sorted(ms for _, ms in self.flushes)
        slow = [[round(ms, 1), round(at - since, 2)] for at, ms in self.flushes if ms >= SLOW_MS]
        return {"flushes": len(took), "p50": round(took[len(took) // 2], 2),
                "max": round(took[-1], 1), f"over_{SLOW_MS:g}_ms_at_s": slow}
