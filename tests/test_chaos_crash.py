"""Crash tests: every role in its own process over PostgreSQL and a private NATS; under a load
of live orders, each role is SIGKILLed in turn and started again. Afterwards no accepted order is
lost or duplicated, the read models list every order and equal a fresh replay, and the webhook
receiver got every public event the history implies.

`make test` runs one round (each role killed once); `make chaos` runs PARTNER_API_CHAOS_SCALE
rounds with a proportionally larger load.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from chaos_support import (
    DRAIN_SECONDS,
    ROLES,
    SCALE,
    Cluster,
    OrderLoad,
    assert_nothing_lost,
    new_live_tenant,
    register_workspace_and_webhook,
    running_cluster,
)
from conftest import ServiceFactory
from test_idempotent_takeover import tenant_on_a_manual_clock
from test_orders_sandbox import counts, error_of, new_workspace, place
from webhook_receiver import Receiver, wait_until

from infra.idempotency import CLAIM_LEASE_SECONDS, Claim, fingerprint
from runtime.container import Container
from services.orders.commands import PlaceOrder
from services.orders.use_cases import place_order

pytestmark = [pytest.mark.postgres, pytest.mark.nats]

# The gateway first: a request it dies in leaves its Idempotency-Key claimed until the claim's
# lease runs out, and the other kills happen meanwhile.
KILL_ORDER = ["gateway", "projections", "publisher", "dispatcher", "worker"]
ORDERS_PER_ROUND = 24


@pytest.fixture
def chaos(tmp_path: Path) -> Iterator[tuple[Cluster, Container, Receiver]]:
    with running_cluster(tmp_path) as (cluster, container, receiver, _):
        yield cluster, container, receiver

def test_each_role_sigkilled_mid_load_loses_nothing(
    chaos: tuple[Cluster, Container, Receiver],
) -> None:
    cluster, container, receiver = chaos
    total = ORDERS_PER_ROUND * SCALE
    tenant = new_live_tenant(container, total)
    cluster.start_all(ROLES)
    register_workspace_and_webhook(tenant, cluster.api, receiver.url)

    # Two clients, so one waiting out a dead gateway's claim does not stop the load.
    loads = [OrderLoad(tenant, cluster.api, total // 2).start() for _ in range(2)]
    kills = len(KILL_ORDER) * SCALE
    for n in range(kills):
        placed = (n + 1) * total // (kills + 2)
        wait_until(lambda p=placed: sum(len(x.accepted) for x in loads) >= p, timeout=DRAIN_SECONDS)
        role = KILL_ORDER[n % len(KILL_ORDER)]
        cluster.kill(role)
        time.sleep(0.2)  # down for a moment while the load goes on
        cluster.restart(role)
    for load in loads:
        load.join()

    accepted = [order_id for load in loads for order_id in load.accepted.values()]
    assert len(accepted) == total and len(set(accepted)) == total
    events = assert_nothing_lost(
        cluster, container, receiver, tenant.org_id, tenant.secret, accepted
    )
    print(f"\nchaos crash: {cluster.crashes} SIGKILLs, {total} orders and {events} webhook "
          "events, 0 lost, 0 duplicated, read models equal to a replay")


def test_a_retry_takes_over_the_claim_of_a_gateway_that_died(
    service_factory: ServiceFactory,
) -> None:
    """A gateway SIGKILLed mid-request leaves its key claimed: after the claim's lease the
    client's retry runs again, and finds the order if the dead one had saved it."""
    service, clock, secret, principal = tenant_on_a_manual_clock(service_factory)
    with service.client(secret) as client:
        body = counts(new_workspace(client), a=1)
        print_ = fingerprint("POST", "/partner/v1/orders", json.dumps(body).encode())
        idempotency = service.container.idempotency
        # What the dead gateways did: both claimed a key, the first also saved its order.
        saved_then_died = idempotency.begin(principal.tenant, "saved-then-died", print_)
        died_before_saving = idempotency.begin(principal.tenant, "died-before-saving", print_)
        assert isinstance(saved_then_died, Claim) and isinstance(died_before_saving, Claim)
        token = saved_then_died.enter()
        try:
            command = msgspec.convert(body, PlaceOrder)
            ghost = place_order(service.container, principal, command)
        finally:
            Claim.leave(token)

        error_of(place(client, body, "saved-then-died"), 409, "idempotency_in_progress")
        clock.advance(CLAIM_LEASE_SECONDS + 1)
        found = place(client, body, "saved-then-died")
        assert found.status_code == 201, found.text
        assert found.json()["data"]["id"] == ghost.id
        fresh = place(client, body, "died-before-saving")
        assert fresh.status_code == 201, fresh.text
        again = place(client, body, "saved-then-died")
        assert again.headers["Idempotent-Replayed"] == "true"
        assert again.json()["data"]["id"] == ghost.id
        service.wait_projections()  # the list is a projection; replays read the aggregate
        listed = sorted(o["id"] for o in client.get("/orders").json()["data"])
        assert listed == sorted([ghost.id, fresh.json()["data"]["id"]])
