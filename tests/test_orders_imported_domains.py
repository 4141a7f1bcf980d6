"""An imported domain can be named on an order and keeps its dom_ id (issues 4 and 5 together)."""

from __future__ import annotations

from conftest import RunningService
from test_orders_sandbox import counts, error_of, new_workspace, place, placed


def test_imported_domain_named_on_order_keeps_its_id(service: RunningService) -> None:
    with service.partner() as client:
        imported = client.post("/domains/import", json={"domains": ["acme-imported.com"]})
        assert imported.status_code == 201, imported.text
        service.wait_projections()
        (row,) = [
            r
            for r in client.get("/domains", params={"category": "inventory"}).json()["data"]
            if r["domain"] == "acme-imported.com"
        ]
        workspace = new_workspace(client)
        body = counts(workspace, a=1, domains=[{"domain": "acme-imported.com", "suite": "suite_a"}])
        (domain,) = placed(client, body)["domains"]
        assert domain["domain"] == "acme-imported.com"
        assert domain["id"] == row["id"]
        # domain.connected carries the row as GET /domains/{id} shows it, in the same words.
        service.wait_projections()
        shown = client.get(f"/domains/{row['id']}").json()["data"]
        connected = client.get("/events", params={"type": "domain.connected"}).json()["data"]
        (event,) = [e["data"] for e in connected if e["data"]["id"] == row["id"]]
        assert event["source"] == shown["source"] == "imported"
        assert event["usable_for"] == shown["usable_for"]
        assert (event["status"], event["order_id"]) == (shown["status"], shown["order_id"])


def test_never_imported_domain_is_refused(service: RunningService) -> None:
    with service.partner() as client:
        workspace = new_workspace(client)
        body = counts(workspace, a=1, domains=[{"domain": "stranger.com", "suite": "suite_a"}])
        error = error_of(place(client, body), 409, "domain_not_imported")
        assert error["field"] == "domains[0].domain"
