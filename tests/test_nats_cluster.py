"""The production shape: a three-node NATS JetStream cluster holding the stream at three
replicas, two gateway and two dispatcher processes (and the other roles) on PostgreSQL, NATS_URL
listing every node. Under a load of sandbox orders posted to both gateways, the node leading
the stream (and its consumer) is SIGKILLed: every event still reaches the receiver, signed,
none twice with different bodies, and both gateways keep answering throughout.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import nats
import pytest
from chaos_support import (
    OrderLoad,
    Tenant,
    assert_nothing_lost,
    cluster_env,
    list_all,
    make_cluster,
    require_postgres,
    send,
    settings_of,
)
from conftest import drop_schema, free_port, require_nats
from nats.js.api import ConsumerConfig
from nats.js.errors import NoStreamResponseError
from nats_cluster_support import NatsCluster, ProductionShape, nats_cluster
from webhook_receiver import Receiver, wait_until

from infra.settings import Settings
from runtime.container import Container
from webhooks.dispatcher import CONSUMER
from webhooks.outbox import ACK_STALL_SECONDS, AcksStalled, await_acks
from webhooks.signing import verify_signature
from webhooks.stream import connect, ensure_stream

pytestmark = [pytest.mark.postgres, pytest.mark.nats]

ORDERS_PER_GATEWAY = 12
ORDER_PAUSE_SECONDS = 0.4  # each gateway's orders spread over about 6 s, the kill among them
SHAPE = {
    "gateway-a": ["gateway"],
    "gateway-b": ["gateway"],
    "dispatcher-a": ["dispatcher"],
    "dispatcher-b": ["dispatcher"],
    # The roles that run one at a time anyway share a process: fewer connections to the
    # PostgreSQL every test shares.
    "background": ["projections", "publisher", "worker"],
}


@dataclass
class Deployment:
    nats: NatsCluster
    shape: ProductionShape
    container: Container
    receiver: Receiver


@pytest.fixture
def deployment(tmp_path: Path) -> Iterator[Deployment]:
    require_postgres()
    with nats_cluster(tmp_path) as cluster:
        env = cluster_env(tmp_path, cluster.url, PARTNER_API_NATS_REPLICAS="3")
        shape = ProductionShape(**vars(make_cluster(tmp_path, env)))
        for name, roles in SHAPE.items():
            shape.add(name, roles)
        container = Container.build(settings_of(env))
        receiver = Receiver().start()
        try:
            yield Deployment(cluster, shape, container, receiver)
        finally:
            shape.stop_all()
            receiver.stop()
            container.close()
            drop_schema(env["PARTNER_API_DATABASE_SCHEMA"])


@dataclass
class Prober:
    """Asks every gateway for a page of orders and for readiness, over and over, from a thread:
    what a partner and a load balancer would see while a NATS node dies."""

    apis: list[str]
    secret: str
    failures: list[str] = field(default_factory=list)
    slowest: float = 0.0
    asked: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> Prober:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        headers = {"Authorization": f"Bearer {self.secret}"}
        with httpx.Client(headers=headers, timeout=10.0) as client:
            while not self._stop.wait(0.2):
                for api in self.apis:
                    for url in (f"{api}/orders?per_page=1", api.removesuffix("/partner/v1") + "/readyz"):
                        self._ask(client, url)

    def _ask(self, client: httpx.Client, url: str) -> None:
        started = time.monotonic()
        try:
            answer = client.get(url)
            if answer.status_code != 200:
                self.failures.append(f"{url}: {answer.status_code} {answer.text[:200]}")
        except httpx.HTTPError as exc:
            self.failures.append(f"{url}: {exc!r}")
        self.slowest = max(self.slowest, time.monotonic() - started)
        self.asked += 1

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=15)


def sandbox_tenant(container: Container) -> Tenant:
    org_id = str(container.accounts.create_organization("Cluster", 1000.0, 100_000)["id"])
    return Tenant(org_id, container.accounts.create_key(org_id, "test", "full").secret)


def workspace_and_webhook(tenant: Tenant, live_key: str, api: str, hook_url: str) -> str:
    """Creates the tenant's workspace and (with a live key: one endpoint serves both
    environments) its endpoint; returns the endpoint's signing secret."""
    with tenant.client(api) as client:
        body = {"name": "Cluster", "provider": "u", "credentials": {"api_key": "key_good"}}
        created = send(client, "POST", "/workspaces", str(uuid.uuid4()), body)
        assert created.status_code == 201, created.text
        tenant.workspace = created.json()["data"]["workspace_id"]
    with Tenant(tenant.org_id, live_key).client(api) as client:
        saved = client.put("/webhook_endpoint", json={"url": hook_url})
        assert saved.status_code == 200, saved.text
        return str(saved.json()["data"]["secret"])


def lead_stream_and_consumer_from_one_node(cluster: NatsCluster, stream: str) -> str:
    """The node leading the stream, after asking the consumer's leader to step down until that
    node leads the consumer too (a new leader is picked at random): its death then costs both
    the publisher and the dispatchers their leader."""
    servers = [node.url for node in cluster.nodes]

    async def leaders(js: Any) -> tuple[str | None, str | None]:
        with contextlib.suppress(nats.errors.Error):  # no leader yet: ask again
            stream_leader = (await js.stream_info(stream)).cluster.leader
            return stream_leader, (await js.consumer_info(stream, CONSUMER)).cluster.leader
        return None, None

    async def align() -> str:
        connection = await nats.connect(servers)
        js = connection.jetstream()
        subject = f"$JS.API.CONSUMER.LEADER.STEPDOWN.{stream}.{CONSUMER}"
        try:
            for _ in range(20):
                stream_leader, consumer_leader = await leaders(js)
                if stream_leader and stream_leader == consumer_leader:
                    return stream_leader
                if stream_leader and consumer_leader:
                    with contextlib.suppress(nats.errors.Error):
                        await connection.request(subject, b"", timeout=5.0)
                await asyncio.sleep(0.5)
            raise AssertionError("the stream and its consumer never had one leader")
        finally:
            await connection.close()

    return asyncio.run(align())


def replicas_of(cluster: NatsCluster, stream: str) -> int:
    """The stream's replicas, 0 while it is not there yet."""
    with contextlib.suppress(nats.errors.Error):
        return int(cluster.stream_info(stream).config.num_replicas or 1)
    return 0


def longest_lag(receiver: Receiver, created_since: float, arrived: tuple[float, float]) -> float:
    """The longest wait, from an event's creation to its first arrival, among the events created
    since `created_since` that first arrived within `arrived`."""
    first: dict[str, float] = {}
    created: dict[str, float] = {}
    for received in list(receiver.received):
        event_id = received.event["id"]
        first[event_id] = min(first.get(event_id, received.at), received.at)
        created[event_id] = datetime.fromisoformat(received.event["created_at"]).timestamp()
    waits = [
        first[e] - created[e]
        for e in first
        if created[e] >= created_since and arrived[0] <= first[e] < arrived[1]
    ]
    return max(waits, default=0.0)


def test_a_dead_nats_node_loses_no_event_and_stops_no_gateway(deployment: Deployment) -> None:
    nats_nodes, shape, container, receiver = (
        deployment.nats, deployment.shape, deployment.container, deployment.receiver
    )
    stream = container.settings.nats_stream
    tenant = sandbox_tenant(container)
    shape.start_planned()
    live_key = container.accounts.create_key(tenant.org_id, "live", "full").secret
    secret = workspace_and_webhook(tenant, live_key, shape.api_of("gateway-a"), receiver.url)
    apis = [shape.api_of(name) for name in shape.gateways]
    wait_until(lambda: replicas_of(nats_nodes, stream) == 3, timeout=30)

    # The node to kill leads both before the load starts: aligning them is a leader change too.
    victim = lead_stream_and_consumer_from_one_node(nats_nodes, stream)
    load_started_at = time.time()
    loads = [OrderLoad(tenant, api, ORDERS_PER_GATEWAY, ORDER_PAUSE_SECONDS).start() for api in apis]
    prober = Prober(apis, tenant.secret).start()
    try:
        wait_until(lambda: all(len(load.accepted) >= 4 for load in loads), timeout=60)
        killed_at = time.time()
        nats_nodes.kill(victim)
        placed_before_the_kill = sum(len(load.accepted) for load in loads)
        for load in loads:
            load.join()
    finally:
        prober.stop()

    accepted = [order_id for load in loads for order_id in load.accepted.values()]
    assert len(set(accepted)) == 2 * ORDERS_PER_GATEWAY
    assert placed_before_the_kill <= len(accepted) - 4  # the node died under the load
    # Every order completed and its order.completed arrived, with every public event the
    # history implies.
    events = assert_nothing_lost(
        shape, container, receiver, tenant.org_id, tenant.secret, accepted, compare_replay=False
    )
    # Every event GET /events lists (on either gateway) arrived.
    for api in apis:
        with tenant.client(api) as client:
            listed = {event["id"] for event in list_all(client, "/events")}
        assert listed and listed <= receiver.event_ids()
    # Signed with the endpoint's secret; an event sent twice sent the same body both times.
    bodies: dict[str, set[bytes]] = {}
    for received in list(receiver.received):
        assert verify_signature(secret, received.headers, received.body, received.at)
        bodies.setdefault(received.headers["Service-Event-Id"], set()).add(received.body)
    assert all(len(sent) == 1 for sent in bodies.values())
    # The stream lives on the two nodes left, with a new leader.
    survivor = nats_nodes.stream_info(stream)
    assert survivor.cluster.leader != victim
    # Both gateways answered every request while the node died, ready all along.
    assert prober.asked > 0 and not prober.failures, prober.failures[:3]

    repeats = len(receiver.received) - len(bodies)
    before = longest_lag(receiver, load_started_at, (load_started_at, killed_at))
    after = longest_lag(receiver, load_started_at, (killed_at, time.time()))
    print(f"\nnats cluster: killed {victim} (stream and consumer leader); {len(accepted)} orders, "
          f"{events} events, 0 lost, {repeats} sent again (same body); longest webhook lag "
          f"{before:.2f} s before the kill, {after:.2f} s after; slowest gateway answer "
          f"{prober.slowest:.2f} s of {prober.asked}")


def test_a_stream_kept_at_other_replicas_is_rescaled(tmp_path: Path) -> None:
    """A deployment moved onto a cluster keeps its stream: the service rescales it."""
    with nats_cluster(tmp_path) as cluster:
        env = cluster_env(tmp_path, cluster.url)
        single = settings_of(env)
        stream = single.nats_stream

        async def ensure(replicas: str, consumer: bool = False) -> None:
            settings = settings_of({**env, "PARTNER_API_NATS_REPLICAS": replicas})
            connection = await nats.connect(settings.nats_servers)
            try:
                js = connection.jetstream()
                await ensure_stream(js, settings)
                if consumer:  # as the dispatchers' would be, inheriting the stream's count
                    await js.add_consumer(stream, ConsumerConfig(durable_name=CONSUMER))
            finally:
                await connection.close()

        async def consumer_peers() -> int:
            connection = await nats.connect(cluster.url.split(","))
            try:
                info = await connection.jetstream().consumer_info(stream, CONSUMER)
                if info.cluster is None:  # mid-rescale the consumer may not report one
                    return 0
                return 1 + len(info.cluster.replicas or [])
            finally:
                await connection.close()

        asyncio.run(ensure("1", consumer=True))
        assert cluster.stream_info(stream).config.num_replicas == 1
        asyncio.run(ensure("3"))
        scaled = cluster.stream_info(stream)
        assert scaled.config.num_replicas == 3
        assert scaled.config.subjects == [f"{stream}.events.>"]
        wait_until(lambda: asyncio.run(consumer_peers()) == 3, timeout=20, interval=0.5)


def test_nats_url_lists_a_cluster_and_replicas_are_bounded() -> None:
    urls = Settings.from_env({"NATS_URL": "nats://a:4222, nats://b:4222,,nats://c:4222"})
    assert urls.nats_servers == ["nats://a:4222", "nats://b:4222", "nats://c:4222"]
    assert Settings.from_env({"NATS_URL": "nats://a:4222"}).nats_replicas == 1
    for wrong in ("0", "6"):
        with pytest.raises(ValueError, match="PARTNER_API_NATS_REPLICAS"):
            Settings.from_env({"PARTNER_API_NATS_REPLICAS": wrong})


def test_a_process_starts_while_a_listed_node_is_down() -> None:
    """A role restarted while one node of NATS_URL is dead connects to another at once."""
    live = require_nats()
    settings = Settings.from_env({"NATS_URL": f"nats://127.0.0.1:{free_port()},{live}"})

    async def connected() -> str:
        connection = await asyncio.wait_for(connect(settings), timeout=10)
        try:
            return str(connection.connected_url.netloc)
        finally:
            await connection.close()

    assert connected_url_of(asyncio.run(connected())) == connected_url_of(live)


def connected_url_of(url: str) -> str:
    return url.split("//", 1)[-1]


def test_a_lost_ack_gives_the_batch_up_without_waiting_for_the_rest() -> None:
    """An ack that never comes (lost with the stream's leader) fails the batch once no ack came
    for ACK_STALL_SECONDS, however long the batch; a refused one fails it at once."""

    async def run() -> tuple[float, float]:
        loop = asyncio.get_running_loop()
        acked, lost = loop.create_future(), loop.create_future()
        acked.set_result("ack")
        started = loop.time()
        with pytest.raises(AcksStalled, match="1 of 2"):
            await await_acks([acked, lost])
        stalled = loop.time() - started
        refused, pending = loop.create_future(), loop.create_future()
        loop.call_later(0.05, refused.set_exception, NoStreamResponseError())
        started = loop.time()
        with pytest.raises(NoStreamResponseError):
            await await_acks([refused, pending])
        return stalled, loop.time() - started

    stalled, refused = asyncio.run(run())
    assert ACK_STALL_SECONDS <= stalled < ACK_STALL_SECONDS + 1.0
    assert refused < 1.0
