"""Process health, readiness (event store and NATS reachable) and Prometheus metrics."""

from __future__ import annotations

import asyncio
import logging
from typing import Any
from urllib.parse import urlsplit

import anyio
from litestar import Request, Response, get

from gateway.rest import metrics
from gateway.rest.lists import container_of
from projections.follower import tracked_position
from projections.runner import READ_MODELS_TRACKING
from webhooks.deliveries import attempt_counts
from webhooks.outbox import TRACKING_NAME as OUTBOX_TRACKING

log = logging.getLogger(__name__)


@get("/healthz", operation_id="healthz", include_in_schema=False)
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@get("/readyz", operation_id="readyz", include_in_schema=False)
async def readyz(request: Request[Any, Any, Any]) -> Response[dict[str, Any]]:
    container = container_of(request)
    checks: dict[str, str] = {}
    try:
        container.store.recorder.max_notification_id()
        checks["event_store"] = "ok"
    except Exception as exc:  # readiness reports, it does not raise
        checks["event_store"] = f"error: {type(exc).__name__}"
    nats_check = container.extras.get("nats_ready")
    if nats_check:
        checks["nats"] = await nats_check()
    elif container.settings.nats_url:
        checks["nats"] = await nats_reachable(container.settings.nats_url)
    else:
        checks["nats"] = "not configured"
    ready = all(v in ("ok", "not configured") for v in checks.values())
    return Response({"ready": ready, "checks": checks}, status_code=200 if ready else 503)


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


@get("/metrics", operation_id="metrics", include_in_schema=False, media_type="text/plain")
async def metrics_endpoint(request: Request[Any, Any, Any]) -> Response[bytes]:
    container = container_of(request)
    head = container.store.recorder.max_notification_id() or 0
    models = container.read_models
    # A process that does not run the projections (serve --role gateway) reads the position
    # they committed; the one that runs them has it in memory.
    applied = (
        models.follower.position
        if models.running_here
        else await anyio.to_thread.run_sync(tracked_position, models.db, READ_MODELS_TRACKING)
    )
    metrics.PROJECTION_LAG.set(max(0, head - applied))
    text = await anyio.to_thread.run_sync(_render_with_stored_figures, container, head)
    return Response(text, media_type="text/plain; version=0.0.4")


def _render_with_stored_figures(container: Any, head: int) -> bytes:
    """The publisher and the dispatcher may be other processes (serve --role ...): their
    figures come from what they stored, so any gateway's scrape shows them."""
    try:
        published = tracked_position(container.read_db, OUTBOX_TRACKING)
        metrics.OUTBOX_BACKLOG.set(max(0, head - published))
        metrics.WEBHOOK_ATTEMPTS.counts = attempt_counts(container.read_db)
    except Exception:  # a scrape answers even while the store is away
        log.warning("stored metrics unavailable", exc_info=True)
        metrics.OUTBOX_BACKLOG.set(float("nan"))
    return metrics.render()
