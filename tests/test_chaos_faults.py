"""Faults under load: NATS stopped and started again, PostgreSQL connections cut, the webhook
receiver down for a while, the provider simulator failing. The API keeps its promises through
each: writes accepted (or refused cleanly), nothing lost, everything delivered afterwards.

NATS here is always a private nats-server on its own port and store, never the machine's.
"""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from chaos_support import (
    DRAIN_SECONDS,
    ROLES,
    SCALE,
    Cluster,
    OrderLoad,
    PrivateNats,
    Tenant,
    assert_nothing_lost,
    list_all,
    new_live_tenant,
    register_workspace_and_webhook,
    running_cluster,
)
from conftest import PATIENCE, PG_URL, RunningService, ServiceFactory
from test_orders_sandbox import counts, error_of, new_workspace, place
from webhook_receiver import Receiver, wait_until

from runtime.container import Container

pytestmark = [pytest.mark.postgres, pytest.mark.nats]

ORDERS = 12


@pytest.fixture
def cluster_parts(tmp_path: Path) -> Iterator[tuple[Cluster, Container, Receiver, PrivateNats]]:
    with running_cluster(tmp_path) as parts:
        yield parts


def loaded(cluster: Cluster, container: Container, receiver: Receiver) -> tuple[Tenant, OrderLoad]:
    tenant = new_live_tenant(container, ORDERS * SCALE)
    cluster.start_all(ROLES)
    register_workspace_and_webhook(tenant, cluster.api, receiver.url)
    return tenant, OrderLoad(tenant, cluster.api, ORDERS * SCALE).start()


def test_writes_go_on_while_nats_is_down_and_events_follow(
    cluster_parts: tuple[Cluster, Container, Receiver, PrivateNats],
) -> None:
    cluster, container, receiver, nats = cluster_parts
    tenant, load = loaded(cluster, container, receiver)
    load.wait_placed(2)
    nats.stop()
    try:
        down_at = len(load.accepted)
        load.wait_placed(down_at + 4)  # accepted while NATS is down
        during = len(load.accepted) - down_at
        assert during >= 4
        assert nats.process is not None and nats.process.poll() is not None
    finally:
        nats.start()  # same port, same store: the stream and the durable consumer come back
    load.join()
    accepted = list(load.accepted.values())
    events = assert_nothing_lost(
        cluster, container, receiver, tenant.org_id, tenant.secret, accepted, compare_replay=False
    )
    print(f"\nchaos nats: {during} orders accepted while NATS was down; {len(accepted)} orders, "
          f"{events} webhook events, 0 lost")


def terminate_connections(application_name: str) -> int:
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
            (application_name,),
        ).fetchall()
    return len(rows)


def test_service_recovers_when_postgres_drops_its_connections(
    cluster_parts: tuple[Cluster, Container, Receiver, PrivateNats],
) -> None:
    cluster, container, receiver, _ = cluster_parts
    tenant, load = loaded(cluster, container, receiver)
    cut = 0
    for round_ in range(3 * SCALE):
        load.wait_placed((round_ + 1) * ORDERS * SCALE // (3 * SCALE + 1))
        cut += terminate_connections(cluster.env["PGAPPNAME"])
    load.join()
    assert cut >= 5  # every role holds connections: each cut hit all of them
    accepted = list(load.accepted.values())
    events = assert_nothing_lost(
        cluster, container, receiver, tenant.org_id, tenant.secret, accepted, compare_replay=False
    )
    for role, process in cluster.processes.items():
        assert process.poll() is None, f"{role} died of the dropped connections"
    print(f"\nchaos postgres: {cut} connections terminated in {3 * SCALE} cuts; "
          f"{len(accepted)} orders, {events} webhook events, 0 lost")


WEBHOOK_ROLES = ["gateway", "projections", "publisher", "dispatcher", "worker"]


@pytest.fixture
def webhooks(service_factory: ServiceFactory) -> RunningService:
    return service_factory(
        roles=WEBHOOK_ROLES,
        allow_http_webhooks=True,
        webhook_retry_schedule=(1.0, 2.0, 4.0, 8.0),
        webhook_timeout_seconds=2.0,
    )


def test_events_reach_a_receiver_that_was_down_for_a_while(webhooks: RunningService) -> None:
    first = Receiver().start()
    port = first.server.server_address[1] if first.server else 0
    with webhooks.partner() as client:
        assert webhooks.put_webhook(client, first.url).status_code == 200
        workspace = new_workspace(client)
        first.stop()  # down: connections refused
        # Hold the port (bound, not listening: still refused) so no other process takes it.
        held = socket.socket()
        held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        held.bind(("127.0.0.1", port))
        orders = [place(client, counts(workspace, a=1)).json()["data"]["id"] for _ in range(5)]

        def failed_attempts() -> int:
            events = list_all(client, "/events")
            return sum(1 for e in events if e["attempts"] and not e["attempts"][0]["succeeded"])

        # Each event had its first attempt refused before the receiver comes back.
        wait_until(lambda: failed_attempts() >= 10, timeout=PATIENCE)
        held.close()
        second = Receiver(port=port).start()
        try:
            expected = {e["id"] for e in list_all(client, "/events")}
            assert len(expected) >= 2 * len(orders)
            wait_until(lambda: expected <= second.event_ids(), timeout=PATIENCE)

            def all_delivered() -> bool:
                events = list_all(client, "/events")
                return all(e["status"] == "delivered" for e in events)

            wait_until(all_delivered, timeout=PATIENCE)
        finally:
            second.stop()
    completed = {r.event["data"]["id"] for r in second.received if r.event["type"] == "order.completed"}
    assert completed == set(orders)


def test_provider_errors_are_provider_unavailable_and_record_nothing(
    service: RunningService,
) -> None:
    with service.partner() as client:
        key = str(uuid.uuid4())
        body = {"name": "Down", "provider": "u", "credentials": {"api_key": "unavailable"}}
        started = time.monotonic()
        for _ in range(3):  # the same key again: still the provider's answer, not a replay
            answer = client.post("/workspaces", json=body, headers={"Idempotency-Key": key})
            error = error_of(answer, 503, "provider_unavailable")
            assert answer.headers["Service-Request-Id"] and "message" in error
            assert "Idempotent-Replayed" not in answer.headers
        assert time.monotonic() - started < DRAIN_SECONDS
        assert client.get("/workspaces").json()["data"] == []
        # The rest of the service is untouched: a working provider gets its workspace and order.
        order = place(client, counts(new_workspace(client), a=1))
        assert order.status_code == 201, order.text
