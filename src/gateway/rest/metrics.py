"""Prometheus metrics of decisions.md section 1.

Request counts, latency and 429s are counted by the process that answered. Behind one port,
`serve --workers N` runs N such processes, so it sets `PROMETHEUS_MULTIPROC_DIR`
(`MULTIPROCESS_DIR`, a fresh directory) and `WORKERS_MARK` for them: each records into files
there and a scrape of any of them adds up all of them. Only the mark switches the scrape: a
`PROMETHEUS_MULTIPROC_DIR` inherited from the shell by a single process, whose directory may
hold another run's files, adds up nothing. The gauges and webhook totals are read from the store when scraped, so they
are plain collectors, the same in every process.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"
WORKERS_MARK = "PARTNER_API_GATEWAY_WORKERS"

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
RATE_UNRECORDED = Counter(
    "partner_api_rate_limit_unrecorded_spends",
    "Rate-limit spends counted in process memory because the store could not be written",
    registry=REGISTRY,
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


class ScrapedGauge(Collector):
    """A gauge the scraping process sets from the store just before rendering."""

    def __init__(self, name: str, documentation: str) -> None:
        self.name, self.documentation, self.value = name, documentation, 0.0

    def set(self, value: float) -> None:
        self.value = value

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(self.name, self.documentation, value=self.value)


WEBHOOK_ATTEMPTS = StoredAttempts()
PROJECTION_LAG = ScrapedGauge(
    "partner_api_projection_lag_events", "Notifications not yet applied to the read models"
)
OUTBOX_BACKLOG = ScrapedGauge(
    "partner_api_outbox_backlog_events",
    "Notifications not yet published to NATS (from the publisher's stored position)",
)
SCRAPED = (WEBHOOK_ATTEMPTS, PROJECTION_LAG, OUTBOX_BACKLOG)
for _collector in SCRAPED:
    REGISTRY.register(_collector)


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
    if not os.environ.get(WORKERS_MARK) or not os.environ.get(MULTIPROCESS_DIR):
        return bytes(generate_latest(REGISTRY))
    every_worker = CollectorRegistry()
    MultiProcessCollector(every_worker)  # type: ignore[no-untyped-call]
    for collector in SCRAPED:
        every_worker.register(collector)
    return bytes(generate_latest(every_worker))
