"""A full disk, as an operator meets it: the data dir on a 48 MB tmpfs, the embedded
nats-server stopped (SIGSTOP) while orders arrive, the disk filled, the server continued.

While the disk is full the service says so (`/readyz` and gRPC health fail; a write is 503
`service_unavailable` with Retry-After, never 500; a read that needs no write still answers);
once the filler is deleted it heals without a restart: ready again, and the webhooks of the
orders placed before, during and after all arrive (the embedded nats-server, whose JetStream
stays broken after a full disk, is restarted by its supervisor).
"""

from __future__ import annotations

import os
import re
import signal
import time
import uuid
from pathlib import Path

import grpc
import httpx
import pytest
from conftest import PG_URL, _reachable, drop_schema, require
from disk_full_support import Served, fill, nats_child, serve_embedded, small_tmpfs
from grpc_health.v1 import health_pb2, health_pb2_grpc
from test_orders_sandbox import counts, new_workspace, place
from webhook_receiver import Receiver, wait_until

from infra.settings import Settings
from infra.wal_checkpoints import truncate_wals
from runtime.container import Container

pytestmark = [pytest.mark.nats]

# What the service is given to notice, and to heal.
NOTICE_SECONDS = 30.0
HEAL_SECONDS = 60.0


def grpc_health(served: Served) -> int:
    with grpc.insecure_channel(served.grpc) as channel:
        stub = health_pb2_grpc.HealthStub(channel)  # type: ignore[no-untyped-call]
        answer = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
        return int(answer.status)


def new_sandbox_key(served: Served) -> str:
    return new_key(served, "test")


def new_key(served: Served, environment: str, org_id: str | None = None) -> str:
    container = Container.build(Settings.from_env(served.env))
    try:
        org_id = org_id or str(container.accounts.create_organization("Disk")["id"])
        return container.accounts.create_key(org_id, environment, "full").secret
    finally:
        container.close()


def live_twin(served: Served, client: httpx.Client) -> httpx.Client:
    """A client of a new live key of `client`'s organization: one webhook endpoint serves both
    environments, so only a live key sets it."""
    org_id = client.get("/me").json()["data"]["partner"]["id"]
    headers = {"Authorization": f"Bearer {new_key(served, 'live', org_id)}"}
    return httpx.Client(base_url=str(client.base_url), headers=headers, timeout=30.0)


def set_webhook(served: Served, client: httpx.Client, url: str) -> httpx.Response:
    with live_twin(served, client) as live:
        return live.put("/webhook_endpoint", json={"url": url})


def place_orders(client: httpx.Client, workspace: str, count: int) -> list[str]:
    placed = [place(client, counts(workspace, a=1)) for _ in range(count)]
    assert all(r.status_code == 201 for r in placed), [r.text for r in placed]
    return [str(r.json()["data"]["id"]) for r in placed]


def completed(receiver: Receiver) -> set[str]:
    return {
        r.event["data"]["id"] for r in list(receiver.received) if r.event["type"] == "order.completed"
    }


def wait_ready_again(served: Served) -> None:
    try:
        wait_until(lambda: served.ready().status_code == 200, timeout=HEAL_SECONDS, interval=0.5)
    except AssertionError:
        raise AssertionError(f"{served.ready().text}\n{served.log_tail()}") from None


def assert_storage_refusal(response: httpx.Response) -> None:
    assert response.status_code == 503, response.text
    error = response.json()["error"]
    assert error["code"] == "service_unavailable"
    assert error["request_id"] == response.headers["Service-Request-Id"]
    assert int(response.headers["Retry-After"]) >= 1
    assert error["details"]["retry_after_seconds"] == int(response.headers["Retry-After"])


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
def test_a_full_disk_is_503_and_heals_without_a_restart(tmp_path: Path, store: str) -> None:
    extra: dict[str, str] = {}
    if store == "postgres":  # the event store elsewhere; the embedded NATS on the small disk
        require("PostgreSQL", _reachable("127.0.0.1", 5432))
        extra = {
            "PARTNER_API_DATABASE_URL": PG_URL,
            "PARTNER_API_DATABASE_SCHEMA": f"t_{uuid.uuid4().hex[:12]}",
            "PARTNER_API_DATABASE_POOL_SIZE": "2",
        }
    receiver = Receiver().start()
    try:
        with (
            small_tmpfs(tmp_path / "disk") as disk,
            serve_embedded(disk / "var", tmp_path / "logs", **extra) as served,
        ):
            headers = {"Authorization": f"Bearer {new_sandbox_key(served)}"}
            with httpx.Client(base_url=served.url + "/partner/v1", headers=headers,
                              timeout=30.0) as client:
                run_the_reproduction(served, client, disk, receiver, store)
    finally:
        receiver.stop()
        drop_schema(extra.get("PARTNER_API_DATABASE_SCHEMA"))


def run_the_reproduction(
    served: Served, client: httpx.Client, disk: Path, receiver: Receiver, store: str
) -> None:
    workspace = new_workspace(client)
    live = live_twin(served, client)  # made now: a full disk takes no new key
    assert live.put("/webhook_endpoint", json={"url": receiver.url}).status_code == 200
    nats = nats_child(served.process.pid)

    os.kill(nats, signal.SIGSTOP)
    orders = place_orders(client, workspace, 3)
    filler = fill(disk)
    os.kill(nats, signal.SIGCONT)

    # Full: not ready, and JetStream's failure to store is named (not only the disk's).
    def nats_failing() -> bool:
        ready = served.ready()
        return ready.status_code == 503 and ready.json()["checks"]["nats"].startswith("error")

    wait_until(nats_failing, timeout=NOTICE_SECONDS, interval=0.5)
    wait_until(lambda: grpc_health(served) == health_pb2.HealthCheckResponse.NOT_SERVING,
               timeout=NOTICE_SECONDS, interval=0.5)
    me = client.get("/me")  # a read: answered, its rate spend counted in memory
    assert me.status_code == 200, me.text
    assert "RateLimit-Remaining" in me.headers
    listed = client.get("/orders")
    assert listed.status_code == 200 and {o["id"] for o in listed.json()["data"]} >= set(orders)
    if store == "sqlite":  # a write cannot be stored: 503 with Retry-After, never 500
        assert_storage_refusal(place(client, counts(workspace, a=1)))
        assert_storage_refusal(live.put("/webhook_endpoint", json={"url": receiver.url}))
    else:  # the event store has room: orders are still taken
        orders += place_orders(client, workspace, 1)

    filler.unlink()
    freed = time.monotonic()
    wait_ready_again(served)
    ready_after = time.monotonic() - freed
    orders += place_orders(client, workspace, 5)
    wait_until(lambda: set(orders) <= completed(receiver), timeout=HEAL_SECONDS, interval=0.2)
    print(f"\n{store}: ready {ready_after:.1f} s after space was back, every order.completed "
          f"delivered after {time.monotonic() - freed:.1f} s")
    wait_until(lambda: grpc_health(served) == health_pb2.HealthCheckResponse.SERVING,
               timeout=NOTICE_SECONDS, interval=0.5)
    if store == "sqlite":  # the spends counted in memory while the rate database was full
        metrics = httpx.get(served.url + "/metrics").text
        unrecorded = re.search(r"^partner_api_rate_limit_unrecorded_spends_total (\S+)$", metrics, re.M)
        assert unrecorded and float(unrecorded[1]) >= 3, metrics


def disk_used(directory: Path) -> dict[str, int]:
    """Bytes allocated under `directory`, by part: SQLite files by name, NATS as one."""
    used: dict[str, int] = {}
    for path in directory.rglob("*"):
        if path.is_file():
            inside = path.relative_to(directory).parts
            part = "nats" if "nats" in inside else path.name.split(".")[0] or path.name
            used[part] = used.get(part, 0) + path.stat().st_blocks * 512
    return used


ORDERS_MEASURED = 40
# docs/resilience.md states the figure this guards (about 37 KB an order).
MAX_BYTES_PER_ORDER = 48 * 1024


def test_disk_each_sandbox_order_costs(tmp_path: Path) -> None:
    """What one sandbox order (one domain, three inboxes, its webhooks delivered) adds to the
    data dir: event store, read models, records, NATS. WAL files truncated before each count,
    as the service does every 30 s."""
    receiver = Receiver().start()
    try:
        with serve_embedded(tmp_path / "var", tmp_path / "logs") as served:
            headers = {"Authorization": f"Bearer {new_sandbox_key(served)}"}
            with httpx.Client(base_url=served.url + "/partner/v1", headers=headers,
                              timeout=30.0) as client:
                workspace = new_workspace(client)
                assert set_webhook(served, client, receiver.url).status_code == 200
                warm = place_orders(client, workspace, 5)
                wait_until(lambda: set(warm) <= completed(receiver), timeout=HEAL_SECONDS)
                before = settled_usage(tmp_path / "var")
                orders = place_orders(client, workspace, ORDERS_MEASURED)
                wait_until(lambda: set(orders) <= completed(receiver), timeout=HEAL_SECONDS)
                after = settled_usage(tmp_path / "var")
    finally:
        receiver.stop()
    per_order = {part: (after.get(part, 0) - before.get(part, 0)) / ORDERS_MEASURED for part in after}
    total = sum(per_order.values())
    print(f"\ndisk per sandbox order: {total / 1024:.1f} KB "
          + ", ".join(f"{part} {size / 1024:.1f} KB" for part, size in sorted(per_order.items())))
    assert total < MAX_BYTES_PER_ORDER, per_order


def settled_usage(data_dir: Path) -> dict[str, int]:
    time.sleep(1.0)  # the last deliveries' records written
    # A checkpoint skips a database a worker is reading at that moment: try until every WAL is
    # empty, as the service's own checkpointer does every 30 s.
    wait_until(lambda: not any(truncate_wals(data_dir).values()), timeout=HEAL_SECONDS)
    return disk_used(data_dir)
