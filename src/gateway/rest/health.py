"""Process health, readiness (event store and NATS reachable) and Prometheus metrics."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get

from gateway.rest import metrics
from gateway.rest.lists import container_of


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
    checks["nats"] = await nats_check() if nats_check else "not configured"
    ready = all(v in ("ok", "not configured") for v in checks.values())
    return Response({"ready": ready, "checks": checks}, status_code=200 if ready else 503)


@get("/metrics", operation_id="metrics", include_in_schema=False, media_type="text/plain")
async def metrics_endpoint(request: Request[Any, Any, Any]) -> Response[bytes]:
    container = container_of(request)
    head = container.store.recorder.max_notification_id() or 0
    metrics.PROJECTION_LAG.set(max(0, head - container.read_models.follower.position))
    return Response(metrics.render(), media_type="text/plain; version=0.0.4")
