"""Concurrent swaps of one domain of an order: one is accepted, the others are refused at once
with 409 `conflict` (the acceptance marks the domain on the order in the same save, so the
racers lose the order's version race and re-run), on both stores.

The new domains are imported ones whose nameservers never point, so the winner stays open
(`action_required`) while the others are decided.
"""

from __future__ import annotations

import uuid

from conftest import RunningService
from test_orders_domain_lock import race
from test_orders_sandbox import error_of
from test_swaps import completed_order, of

RACERS = 4


def test_concurrent_swaps_of_one_domain_one_is_accepted(service: RunningService) -> None:
    org = service.new_org()
    secret = service.new_key(org, "test")
    new_names = [f"nsnever-race{i}.com" for i in range(RACERS)]
    with service.client(secret) as client:
        order = completed_order(client)
        imported = client.post("/domains/import", json={"domains": new_names})
        assert imported.status_code == 201, imported.text
        old = order["domains"][0]["domain"]
    service.wait_projections()

    bodies = [of(order, old, new_domain=name) for name in new_names]
    responses = race(service, secret, bodies, path="/swaps")
    won = [r for r in responses if r.status_code == 201]
    assert len(won) == 1, [r.text for r in responses]
    assert won[0].json()["data"]["status"] == "action_required"
    for lost in (r for r in responses if r.status_code != 201):
        assert error_of(lost, 409, "conflict")["field"] == "domain"

    with service.client(secret) as client:
        # Still refused once the racers are done; the other domain of the order is free.
        assert error_of(client.post(
            "/swaps", json=bodies[0], headers={"Idempotency-Key": str(uuid.uuid4())}
        ), 409, "conflict")["field"] == "domain"
        service.wait_projections()  # the list is a projection
        swaps = client.get("/swaps").json()["data"]
        assert [s["id"] for s in swaps if s["status"] != "failed"] == [won[0].json()["data"]["id"]]
