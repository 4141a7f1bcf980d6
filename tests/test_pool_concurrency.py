"""Attaches racing for the last pool domains never both succeed (optimistic concurrency)."""

from __future__ import annotations

import threading
from collections import Counter

import httpx
from conftest import RunningService
from pool_support import attach, conditions, finished, pooled
from test_orders_sandbox import new_workspace


def test_twenty_concurrent_attaches_share_ten_domains_exactly(service: RunningService) -> None:
    org = service.new_org()
    secret = service.new_key(org)
    with service.client(secret) as client:
        names = pooled(client, 10)
        workspace = new_workspace(client)
    start = threading.Barrier(20)
    results: list[httpx.Response] = []
    lock = threading.Lock()

    def racer() -> None:
        headers = {"Authorization": f"Bearer {secret}"}
        with httpx.Client(base_url=service.api, headers=headers, timeout=60.0) as own:
            start.wait()
            response = attach(own, workspace, 1)
        with lock:
            results.append(response)

    threads = [threading.Thread(target=racer) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=90)
    assert len(results) == 20
    outcomes = Counter(
        r.json()["data"]["status"] if r.status_code == 202 else r.json()["error"]["code"]
        for r in results
    )
    assert outcomes == {"in_progress": 10, "insufficient_inventory": 10}, outcomes
    taken = [r.json()["data"]["domains"][0]["domain"] for r in results if r.status_code == 202]
    assert sorted(taken) == sorted(names)
    with service.client(secret) as client:
        for response in results:
            if response.status_code == 202:
                finished(client, f"/pool/reservations/{response.json()['data']['id']}")
        assert Counter(conditions(client).values()) == {"assigned": 10}
