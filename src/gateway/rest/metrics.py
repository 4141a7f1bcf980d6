"""Prometheus metrics of decisions.md section 1."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

REGISTRY = CollectorRegistry()

REQUESTS = Counter(
    "partner_api_requests", "HTTP requests", ["method", "route", "status"], registry=REGISTRY
)
LATENCY = Histogram(
    "partner_api_request_seconds",
    "HTTP request latency",
    ["method", "route"],
    registry=REGISTRY,
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
)
RATE_LIMITED = Counter(
    "partner_api_rate_limit_rejections", "Requests refused with 429", registry=REGISTRY
)
WEBHOOK_ATTEMPTS = Counter(
    "partner_api_webhook_attempts", "Webhook delivery attempts", ["outcome"], registry=REGISTRY
)
PROJECTION_LAG = Gauge(
    "partner_api_projection_lag_events",
    "Notifications not yet applied to the read models",
    registry=REGISTRY,
)
OUTBOX_BACKLOG = Gauge(
    "partner_api_outbox_backlog_events",
    "Notifications not yet published to NATS",
    registry=REGISTRY,
)


def observe_request(method: str, route: str, status: int, seconds: float) -> None:
    REQUESTS.labels(method, route, str(status)).inc()
    LATENCY.labels(method, route).observe(seconds)


def render() -> bytes:
    return bytes(generate_latest(REGISTRY))
