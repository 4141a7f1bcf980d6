"""The order shapes documented in the OpenAPI document (`views/orders.py`) are the
shapes the service answers: real responses decode strictly into them."""

from __future__ import annotations

import msgspec
from conftest import RunningService
from test_orders_sandbox import counts, new_workspace, place, settled
from test_wallet_purchase import buy, credit

from views.orders import (
    OrderDomain,
    OrderList,
    OrderOut,
    OrderResponse,
    PendingActionList,
)


def test_orders_answer_their_documented_shape(service: RunningService) -> None:
    with service.partner() as client:
        workspace = new_workspace(client)
        completed = place(client, counts(workspace, a=1, b=1))
        waiting = place(client, counts(workspace, a=1, profile_picture_url="http://10.0.0.1/p"))
        for response in (completed, waiting):
            assert response.status_code == 201, response.text
            msgspec.json.decode(response.content, type=OrderResponse, strict=True)
            # Every field answered is documented, and the other way round.
            order = response.json()["data"]
            assert set(order) == set(OrderOut.__struct_fields__)
            assert set(order["domains"][0]) == set(OrderDomain.__struct_fields__)
        # Both were answered `in_progress`; what the worker makes of them keeps the shape too.
        assert settled(client, completed)["status"] == "completed"
        assert settled(client, waiting)["status"] == "action_required"
        order_id = waiting.json()["data"]["id"]
        msgspec.json.decode(client.get(f"/orders/{order_id}").content, type=OrderResponse)
        msgspec.json.decode(client.get("/orders").content, type=OrderList)
        pending = client.get("/orders/pending", params={"order_id": order_id})
        assert msgspec.json.decode(pending.content, type=PendingActionList).data
        cancelled = client.post(f"/orders/{order_id}/cancel")
        msgspec.json.decode(cancelled.content, type=OrderResponse)
        paths = client.get("/schema/openapi.json").json()["paths"]
    org = service.new_org()
    credit(service, org, 10_000)
    with service.client(service.new_key(org, "live")) as live:
        bought = buy(live, "shape-doc.com")
        assert bought.status_code == 201, bought.text
        msgspec.json.decode(bought.content, type=OrderResponse, strict=True)
    documented = {
        ("/partner/v1/orders", "post", "201"): "OrderResponse",
        ("/partner/v1/orders", "get", "200"): "OrderList",
        ("/partner/v1/orders/{order_id}", "get", "200"): "OrderResponse",
        ("/partner/v1/orders/pending", "get", "200"): "PendingActionList",
        ("/partner/v1/domains/purchase", "post", "201"): "OrderResponse",
    }
    for (path, method, status), name in documented.items():
        content = paths[path][method]["responses"][status]["content"]["application/json"]
        assert content["schema"]["$ref"].endswith(name), (path, content)
