"""A small keep-alive HTTP/1.1 load generator on raw asyncio streams.

Same generator for the service and its baseline, so ratios compare servers, not clients.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass


@dataclass
class LoadResult:
    requests: int
    errors: int
    seconds: float
    latencies: list[float]

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    def percentile(self, q: float) -> float:
        if not self.latencies:
            return 0.0
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    def summary(self) -> dict[str, float]:
        return {
            "rps": round(self.rps, 1),
            "p50_ms": round(self.percentile(0.50) * 1000, 3),
            "p99_ms": round(self.percentile(0.99) * 1000, 3),
            "mean_ms": round(statistics.fmean(self.latencies) * 1000, 3) if self.latencies else 0,
            "requests": self.requests,
            "errors": self.errors,
        }


async def _read_response(reader: asyncio.StreamReader) -> int:
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    length = 0
    for line in head.split(b"\r\n"):
        if line[:15].lower() == b"content-length:":
            length = int(line[15:].strip())
    if length:
        await reader.readexactly(length)
    return status


async def _worker(
    host: str, port: int, request: bytes, deadline: float, result: LoadResult
) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            writer.write(request)
            status = await _read_response(reader)
            result.latencies.append(time.perf_counter() - started)
            result.requests += 1
            if status >= 400:
                result.errors += 1
    finally:
        writer.close()


def build_request(
    method: str, path: str, headers: dict[str, str] | None = None, body: bytes = b""
) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: keep-alive"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    if body:
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def run_load(
    host: str, port: int, request: bytes, seconds: float, connections: int
) -> LoadResult:
    result = LoadResult(0, 0, 0.0, [])
    started = time.perf_counter()
    deadline = started + seconds
    await asyncio.gather(
        *(_worker(host, port, request, deadline, result) for _ in range(connections))
    )
    result.seconds = time.perf_counter() - started
    return result
