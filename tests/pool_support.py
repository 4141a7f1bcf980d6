"""Helpers for the pool tests: domains on a completed suite_a order, added to the pool."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx
from test_orders_sandbox import counts, new_workspace, place, placed


def ordered_domains(client: httpx.Client, a: int = 2, b: int = 0) -> list[str]:
    """Names of the domains of a new completed sandbox order (suite_a first)."""
    order = placed(client, counts(new_workspace(client), a=a, b=b))
    assert order["status"] == "completed", order
    return [d["domain"] for d in sorted(order["domains"], key=lambda d: d["suite"])]


def add(client: httpx.Client, *names: str) -> httpx.Response:
    return client.post("/pool/add", json={"domains": list(names)})


def remove(client: httpx.Client, *names: str) -> httpx.Response:
    return client.post("/pool/remove", json={"domains": list(names)})


def attach(client: httpx.Client, workspace: str, quantity: int, **extra: Any) -> httpx.Response:
    return client.post(
        "/pool/attach", json={"workspace_id": workspace, "quantity": quantity, **extra}
    )


def finished(client: httpx.Client, path: str, timeout: float = 30.0) -> dict[str, Any]:
    """The job at `path` once it has left `in_progress` (pool attach and release are
    asynchronous for sandbox keys too; the pool worker finishes them at once)."""
    deadline = time.monotonic() + timeout
    while True:
        job: dict[str, Any] = client.get(path).json()["data"]
        if job["status"] != "in_progress":
            return job
        assert time.monotonic() < deadline, f"{path} still in progress"
        time.sleep(0.02)


def attached(client: httpx.Client, workspace: str, quantity: int, **extra: Any) -> dict[str, Any]:
    """A sandbox attach followed to its end."""
    response = attach(client, workspace, quantity, **extra)
    assert response.status_code == 202, response.text
    assert response.json()["data"]["status"] == "in_progress"
    return finished(client, f"/pool/reservations/{response.json()['data']['id']}")


def released(client: httpx.Client, *names: str) -> dict[str, Any]:
    """A sandbox release followed to its end."""
    response = client.post("/pool/release", json={"domains": list(names)})
    assert response.status_code == 202, response.text
    assert response.json()["data"]["status"] == "in_progress"
    return finished(client, f"/pool/releases/{response.json()['data']['id']}")


def pooled(client: httpx.Client, count: int) -> list[str]:
    """`count` domains in the pool (sandbox: available at once)."""
    names = ordered_domains(client, a=count)
    response = add(client, *names)
    assert response.status_code == 200, response.text
    assert response.json()["data"]["added"] == count
    return names


def conditions(client: httpx.Client) -> dict[str, str]:
    rows = client.get("/pool/domains", params={"per_page": 100}).json()["data"]
    return {row["domain"]: row["condition"] for row in rows}


def live_ordered_domains(
    service: Any, clock: Any, client: httpx.Client, org: str, a: int
) -> list[str]:
    """Names of a new live suite_a order completed by the worker on the manual clock."""
    from test_wallet_purchase import credit

    credit(service, org, 1_000_000)
    response = place(client, counts(new_workspace(client), a=a))
    assert response.status_code == 201, response.text
    order_id = response.json()["data"]["id"]
    deadline = time.monotonic() + 30
    while True:
        order = client.get(f"/orders/{order_id}").json()["data"]
        if order["status"] == "completed":
            return [d["domain"] for d in order["domains"]]
        assert time.monotonic() < deadline, f"order stayed {order['status']}"
        clock.advance(1)
        time.sleep(0.05)


def wait_for(check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
