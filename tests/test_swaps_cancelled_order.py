"""A cancelled order ends its open swaps: each fails at once with `swap.failed` and its charge
is refunded, instead of waiting for good or provisioning onto a cancelled order."""

from __future__ import annotations

import time

from conftest import ServiceFactory
from test_orders_codes_events import advance_until
from test_orders_sandbox import counts, new_workspace, place
from test_swaps import PERSONAS, of, swap, swap_events
from test_wallet_purchase import credit

from infra.clock import ManualClock


def test_cancelling_an_order_fails_its_open_swaps_and_refunds_them(
    service_factory: ServiceFactory,
) -> None:
    clock = ManualClock()
    service = service_factory(clock=clock, fulfillment_step_seconds=1)
    org = service.new_org()
    credit(service, org, 50_000)
    with service.client(service.new_key(org, "live")) as live:
        order_id = place(live, counts(new_workspace(live), a=2, personas=PERSONAS)).json()["data"]["id"]
        order = advance_until(live, clock, order_id, "completed")
        first, second = (d["domain"] for d in order["domains"])
        imported = live.post("/domains/import", json={"domains": ["nsnever-kept.com"]})
        assert imported.status_code == 201, imported.text
        balance = live.get("/wallet").json()["data"]["balance_cents"]
        # The clock stands still: both swaps stay open (`created`) until the cancel.
        bought = swap(live, of(order, first)).json()["data"]
        waiting = swap(live, of(order, second, new_domain="nsnever-kept.com")).json()["data"]
        assert (bought["status"], bought["charged_cents"]) == ("created", 1299)
        assert live.get("/wallet").json()["data"]["balance_cents"] == balance - 1299

        cancelled = live.post(f"/orders/{order_id}/cancel")
        assert cancelled.status_code == 200, cancelled.text
        assert cancelled.json()["data"]["status"] == "cancel_scheduled"
        for swap_id in (bought["id"], waiting["id"]):
            view = live.get(f"/swaps/{swap_id}").json()["data"]
            assert view["status"] == "failed" and "cancelled" in view["reason"], view
        assert live.get(f"/swaps/{bought['id']}").json()["data"]["refunded_cents"] == 1299
        wallet = live.get("/wallet").json()["data"]
        assert wallet["balance_cents"] == balance
        assert [e["type"] for e in wallet["entries"][:1]] == ["refund"]
        clock.advance(5)
        time.sleep(0.3)  # a worker that picked a swap up would move it now: it must not
        assert live.get(f"/swaps/{waiting['id']}").json()["data"]["status"] == "failed"
        service.wait_projections()
        assert [e["type"] for e in swap_events(live, bought["id"])] == [
            "swap.created", "swap.failed"
        ]
        # The order's domains stay as they were: the swaps changed nothing.
        kept = {d["domain"] for d in live.get(f"/orders/{order_id}").json()["data"]["domains"]}
        assert kept == {first, second}
