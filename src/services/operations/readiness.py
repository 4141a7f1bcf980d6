"""Readiness that tells the truth, for `/readyz` and the gRPC health service alike.

Not ready while any of these holds (docs/resilience.md):
- the event store cannot be read, or cannot be written: a storage failure within the last
  seconds, or (SQLite) no room in the data dir for a transaction;
- NATS is unreachable, or its JetStream cannot store (the outbox's publishes fail, or the
  embedded server's probe does);
- the outbox is stuck: events wait for it and its position has not moved for
  `outbox_stuck_seconds`.

A check of the store that has not answered within `STORE_CHECK_SECONDS` reports an error:
a database that stopped answering (a dead host, a cut network) holds a query for minutes, and
a probe must hear "not ready", not time out. Such a check goes on in a daemon thread of its own,
and the next probes wait for that one instead of starting more.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from infra.storage_health import room_to_write
from projections.follower import tracked_position
from views.readiness import Readiness
from webhooks.outbox import TRACKING_NAME as OUTBOX_TRACKING

if TYPE_CHECKING:
    from runtime.container import Container

OK = ("ok", "not configured")
STORE_CHECK_SECONDS = 2.0


@dataclass
class OutboxProgress:
    """The outbox position this process last saw, and when it last saw it move."""

    position: int = -1
    moved_at: float = 0.0


async def readiness(container: Container) -> Readiness:
    # Side by side: a stalled store answers "not ready" in one check's time, not the sum.
    names = ["event_store", "nats"]
    waits = [_answered_in_time(container, event_store_check), nats_check(container)]
    if container.settings.nats_url:
        names.append("outbox")
        waits.append(_answered_in_time(container, outbox_check))
    checks = dict(zip(names, await asyncio.gather(*waits), strict=True))
    return Readiness(ready=all(value in OK for value in checks.values()), checks=checks)


async def _answered_in_time(container: Container, check: Callable[[Container], str]) -> str:
    """The check's answer, or an error once it took `STORE_CHECK_SECONDS`."""
    key = f"readiness:{check.__name__}"
    running: Future[str] | None = container.extras.get(key)
    if running is None or running.done():
        running = _in_a_thread(check, container)
        container.extras[key] = running
    try:
        answer = asyncio.wrap_future(running)
        return await asyncio.wait_for(asyncio.shield(answer), STORE_CHECK_SECONDS)
    except TimeoutError:
        return f"error: no answer within {STORE_CHECK_SECONDS:g} s"
    except Exception as exc:  # readiness reports, it does not raise
        return f"error: {type(exc).__name__}"


def _in_a_thread(check: Callable[[Container], str], container: Container) -> Future[str]:
    """A daemon thread, not a pool's: one stuck on a dead database must not hold up exit."""
    future: Future[str] = Future()

    def run() -> None:
        try:
            future.set_result(check(container))
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting probe
            future.set_exception(exc)

    threading.Thread(target=run, name=f"readiness-{check.__name__}", daemon=True).start()
    return future


def event_store_check(container: Container) -> str:
    try:
        container.store.recorder.max_notification_id()
    except Exception as exc:  # readiness reports, it does not raise
        return f"error: {type(exc).__name__}"
    failed = container.storage_health.recent("event_store")
    if failed:
        return f"error: cannot write ({failed})"
    if not container.settings.database_url:
        return room_to_write(container.settings.data_dir)
    return "ok"


async def nats_check(container: Container) -> str:
    custom = container.extras.get("nats_ready")
    if custom:
        reachable: str = await custom()
    elif container.settings.nats_url:
        reachable = await nats_reachable(container.settings.nats_url)
    else:
        return "not configured"
    if reachable != "ok":
        return reachable
    failed = container.storage_health.recent("nats")
    if failed:
        return f"error: JetStream cannot store ({failed})"
    embedded = container.extras.get("embedded_nats")
    if embedded is not None and embedded.jetstream_error:
        return f"error: JetStream cannot store ({embedded.jetstream_error})"
    return "ok"


def outbox_check(container: Container) -> str:
    head = container.store.recorder.max_notification_id() or 0
    try:
        published = tracked_position(container.read_db, OUTBOX_TRACKING)
    except Exception:  # noqa: BLE001 - no tracking table yet: nothing was ever published
        published = 0
    progress: OutboxProgress = container.extras.setdefault("outbox_progress", OutboxProgress())
    now = time.monotonic()
    if published != progress.position or head <= published:
        progress.position, progress.moved_at = published, now
    stalled = now - progress.moved_at
    if stalled > container.settings.outbox_stuck_seconds:
        return f"error: stuck for {stalled:.0f} s with {head - published} events unpublished"
    return "ok"


async def nats_reachable(nats_url: str, timeout: float = 2.0) -> str:
    """`ok` when one of the servers in NATS_URL greets with its INFO line (decisions.md 1:
    readiness means NATS is reachable, embedded or not), else the failure's name."""
    failure = "error: no server in NATS_URL"
    for server in nats_url.split(","):
        try:
            parsed = urlsplit(server.strip() if "://" in server else f"nats://{server.strip()}")
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(parsed.hostname or "127.0.0.1", parsed.port or 4222),
                timeout,
            )
        except (OSError, TimeoutError, ValueError) as exc:  # ValueError: a malformed address
            failure = f"error: {type(exc).__name__}"
            continue
        try:
            greeting = await asyncio.wait_for(reader.readline(), timeout)
        except (OSError, TimeoutError) as exc:
            greeting, failure = b"", f"error: {type(exc).__name__}"
        finally:
            writer.close()
        if greeting.startswith(b"INFO"):
            return "ok"
    return failure
