"""One stored event may map to many public events (a 100-domain order's completion: a
`domain.connected` per domain): each gets a position of its own, and the read models go on.
A store written with the first, narrower spacing of positions is renumbered once at start."""

from __future__ import annotations

from conftest import RunningService
from test_orders_sandbox import counts, new_workspace, placed

from webhooks.event_log import POSITION_STRIDE, WebhookEventLog


def all_events(client: object) -> list[dict[str, object]]:
    found: list[dict[str, object]] = []
    params: dict[str, object] = {"per_page": 100}
    while True:
        page = client.get("/events", params=params).json()  # type: ignore[attr-defined]
        found += page["data"]
        if not page["links"]["next"]:
            return found
        params = {"per_page": 100, "page_token": page["links"]["next"].split("page_token=")[1]}


def test_an_order_of_a_hundred_domains_is_listed_with_all_its_events(
    service: RunningService,
) -> None:
    with service.partner() as client:
        workspace = new_workspace(client)
        big = placed(client, counts(workspace, a=70, b=30))
        assert big["status"] == "completed" and len(big["domains"]) == 100
        after = placed(client, counts(workspace, a=1))  # the read models went on
        listed = client.get("/orders", params={"per_page": 100}).json()["data"]
        assert {big["id"], after["id"]} <= {order["id"] for order in listed}
        events = all_events(client)
    connected = [e for e in events if e["type"] == "domain.connected"]
    assert len(connected) == 101
    assert len({e["id"] for e in events}) == len(events)


def test_positions_of_the_first_spacing_are_renumbered_once(service: RunningService) -> None:
    db = service.container.read_db
    with db.transaction() as cur:
        cur.execute("DELETE FROM webhook_event_stride")
        cur.execute("DELETE FROM webhook_events")
        for notification_id, index in ((1, 0), (1, 1), (300, 0), (300, 63), (70_000, 2)):
            cur.execute(
                "INSERT INTO webhook_events (id, position, tenant, type, resource_id, "
                "created_at, envelope) VALUES (?, ?, 't', 'x', 'r', 0, '{}')",
                (f"evt_{notification_id}_{index}", notification_id * 64 + index),
            )
    for _ in range(2):  # a second start finds them renumbered already
        with db.transaction() as cur:
            WebhookEventLog().create_tables(cur)
    with db.read() as cur:
        rows = cur.execute("SELECT id, position FROM webhook_events ORDER BY position").fetchall()
    assert [(r["id"], r["position"]) for r in rows] == [
        ("evt_1_0", POSITION_STRIDE),
        ("evt_1_1", POSITION_STRIDE + 1),
        ("evt_300_0", 300 * POSITION_STRIDE),
        ("evt_300_63", 300 * POSITION_STRIDE + 63),
        ("evt_70000_2", 70_000 * POSITION_STRIDE + 2),
    ]
