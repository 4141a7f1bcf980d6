"""Process health, readiness (services/operations/readiness.py) and Prometheus metrics."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from litestar import Request, Response, get

from gateway.rest import metrics
from gateway.rest.lists import container_of
from infra.blocking import run_blocking
from projections.follower import tracked_position
from projections.runner import READ_MODELS_TRACKING
from services.operations.readiness import nats_reachable, readiness
from views.readiness import Readiness
from webhooks.deliveries import attempt_counts
from webhooks.outbox import TRACKING_NAME as OUTBOX_TRACKING

if TYPE_CHECKING:
    from runtime.container import Container

log = logging.getLogger(__name__)
__all__ = ["healthz", "metrics_endpoint", "nats_reachable", "readyz"]


@get("/healthz", operation_id="healthz", include_in_schema=False)
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@get("/readyz", operation_id="readyz", include_in_schema=False)
async def readyz(request: Request[Any, Any, Any]) -> Response[Readiness]:
    found = await readiness(container_of(request))
    return Response(found, status_code=200 if found.ready else 503)


@get("/metrics", operation_id="metrics", include_in_schema=False, media_type="text/plain")
async def metrics_endpoint(request: Request[Any, Any, Any]) -> Response[bytes]:
    container = container_of(request)
    # Off the event loop: a stalled database must not hold up every request of this process.
    head = await run_blocking(lambda: container.store.recorder.max_notification_id() or 0)
    models = container.read_models
    # A process that does not run the projections (serve --role gateway) reads the position
    # they committed; the one that runs them has it in memory.
    applied = (
        models.follower.position
        if models.running_here
        else await run_blocking(tracked_position, models.db, READ_MODELS_TRACKING)
    )
    metrics.PROJECTION_LAG.set(max(0, head - applied))
    text = await run_blocking(_render_with_stored_figures, container, head)
    return Response(text, media_type="text/plain; version=0.0.4")


def _render_with_stored_figures(container: Container, head: int) -> bytes:
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
