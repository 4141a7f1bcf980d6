"""The mixed benchmark scenario runs for a few seconds against a real service
with the webhook roles and a real receiver, on SQLite only: no 5xx, every listed event arrives."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from conftest import ServiceFactory, delete_nats_stream
from webhook_receiver import Receiver

from bench.scenario_mixed import MIX, load_and_wait, set_up_tenants
from webhooks.commands import SetWebhookEndpoint
from webhooks.endpoints import endpoints_of

ROLES = ["gateway", "projections", "publisher", "dispatcher", "worker"]


class ReceiverInProcess:
    """The tests' loopback receiver seen the way the scenario counts deliveries."""

    def __init__(self, receiver: Receiver) -> None:
        self.receiver = receiver

    def arrivals(self) -> dict[str, float]:
        with self.receiver.lock:
            first: dict[str, float] = {}
            for received in self.receiver.received:
                first.setdefault(received.headers["Service-Event-Id"], received.at)
            return first

    def posts(self) -> int:
        with self.receiver.lock:
            return len(self.receiver.received)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    started = Receiver().start()
    yield started
    started.stop()


@pytest.mark.parametrize("store_kind", ["sqlite"])
def test_mixed_scenario_runs_without_server_errors(
    service_factory: ServiceFactory, receiver: Receiver
) -> None:
    # A failed attempt (a stall on the loaded machine) is retried within seconds, not minutes.
    running = service_factory(roles=ROLES, allow_http_webhooks=True,
                              webhook_retry_schedule=(0.5, 0.5, 0.5, 0.5))
    settings = running.container.settings
    try:
        secrets = []
        for n in range(3):  # as `sandbox_secrets` does through the operator CLI
            org = running.new_org(f"Mixed {n}", rate_rps=1_000_000, rate_burst=1_000_000)
            endpoints_of(running.container).set_url(org, SetWebhookEndpoint(url=receiver.url))
            secrets.append(running.new_key(org))
        tenants = set_up_tenants(running.base_url, secrets)
        port = int(running.base_url.rsplit(":", 1)[1])
        result = load_and_wait(port, tenants, ReceiverInProcess(receiver), seconds=3,
                               connections=4, webhook_wait=30)
    finally:
        # The machine's NATS outlives the test: leave no per-test stream behind.
        assert settings.nats_url
        with contextlib.suppress(Exception):
            delete_nats_stream(settings)

    endpoints = result["endpoints"]
    assert {"GET /me", "POST /orders"} <= endpoints.keys() <= MIX.keys()
    assert all(row["server_errors"] == 0 for row in endpoints.values()), endpoints
    # Sandbox orders complete at once; a retry with the same key answers the same 201.
    for orders in ("POST /orders", "POST /orders (retry)"):
        if orders in endpoints:
            assert endpoints[orders]["statuses"].keys() == {"201"}, endpoints[orders]
    hooks = result["webhooks"]
    assert hooks["expected"] > 0 and hooks["missing"] == 0, hooks
