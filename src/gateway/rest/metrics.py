"""Prometheus metrics of decisions.md section 1."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector

REGISTRY = CollectorRegistry()

REQUESTS = Counter(
    "partner_api_requests", "HTTP requests", ["method", "route", "status"], registry=REGISTRY
)
LATENCY = Histogram(
    "partner_api_request_seconds",
    "HTTP request latency",
    ["method", "route", "status"],
    registry=REGISTRY,
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
)
RATE_LIMITED = Counter(
    "partner_api_rate_limit_rejections", "Requests refused with 429", registry=REGISTRY
)


class StoredAttempts(Collector):
    """Webhook attempts by outcome, from the totals the dispatcher stores with each batch of
    attempts: it may be another process (serve --role dispatcher), so the scraping process
    reads them (`counts`, set at scrape time)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {"success": 0, "failure": 0}

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(
            "partner_api_webhook_attempts", "Webhook delivery attempts", labels=["outcome"]
        )
        for outcome, count in self.counts.items():
            family.add_metric([outcome], count)
        yield family


WEBHOOK_ATTEMPTS = StoredAttempts()
REGISTRY.register(WEBHOOK_ATTEMPTS)
PROJECTION_LAG = Gauge(
    "partner_api_projection_lag_events",
    "Notifications not yet applied to the read models",
    registry=REGISTRY,
)
OUTBOX_BACKLOG = Gauge(
    "partner_api_outbox_backlog_events",
    "Notifications not yet published to NATS (from the publisher's stored position)",
    registry=REGISTRY,
)


_children: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}


def observe_request(method: str, route: str, status: int, seconds: float) -> None:
    # `labels()` validates and locks on every call; the labelled children are looked up once.
    key = (method, route, status)
    children = _children.get(key)
    if children is None:
        code = str(status)
        children = (REQUESTS.labels(method, route, code), LATENCY.labels(method, route, code))
        _children[key] = children
    children[0].inc()
    children[1].observe(seconds)


def render() -> bytes:
    return bytes(generate_latest(REGISTRY))
