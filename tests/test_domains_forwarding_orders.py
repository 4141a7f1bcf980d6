"""Forwarding reaches domains that live inside an order, not only imported ones (decisions.md 3)."""

from __future__ import annotations

from conftest import RunningService
from test_domains_inventory import domains, order


def test_forwarding_applies_to_domains_held_by_an_order(service: RunningService) -> None:
    with service.partner() as client:
        placed = order(client, forwarding_url="https://before.example/")
        client.post("/domains/import", json={"domains": ["fwo-imported.com"]})
        names = [d["domain"] for d in placed["domains"]]
        url = "https://after.example/"
        response = client.post(
            "/domains/forwarding",
            json={"domains": [*names, "fwo-imported.com"], "forwarding_url": url},
        )
        assert response.status_code == 201, response.text
        job = response.json()["data"]
        assert job["status"] == "completed" and job["pending"] == []
        assert sorted(job["completed"]) == sorted([*names, "fwo-imported.com"])

        for item in placed["domains"]:
            row = client.get(f"/domains/{item['id']}").json()["data"]
            assert row["forwarding_url"] == url and row["order_id"] == placed["id"]
        connected = domains(client, category="connected")
        assert {r["forwarding_url"] for r in connected} == {url}
        assert domains(client, domain="fwo-imported.com")[0]["forwarding_url"] == url
        on_order = client.get(f"/orders/{placed['id']}").json()["data"]["domains"]
        assert {d["forwarding_url"] for d in on_order} == {url}

        updated = client.get("/events", params={"type": "domain.forwarding_updated"}).json()
        assert sorted(e["data"]["domain"] for e in updated["data"]) == sorted(
            [*names, "fwo-imported.com"]
        )

        # Already forwarding there: completed at once, nothing changes, no second event.
        again = client.post(
            "/domains/forwarding", json={"domains": names, "forwarding_url": url}
        ).json()["data"]
        assert sorted(again["completed"]) == sorted(names) and again["pending"] == []
        repeat = client.get("/events", params={"type": "domain.forwarding_updated"}).json()
        assert len(repeat["data"]) == len(names) + 1
