"""An `Idempotency-Key` is honoured on every POST and PATCH that changes something, not only
where spec 8 requires it: a retry whose answer was lost answers the first response and does
nothing again; the same key on another body is 409 `idempotency_conflict`."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from conftest import RunningService
from pool_support import ordered_domains, remove
from test_orders_sandbox import counts, error_of, new_workspace, placed


def twice(
    client: httpx.Client, method: str, path: str, body: dict[str, Any] | None, other: Any
) -> dict[str, Any]:
    """Sends the request twice under one key, then with the key on `other`: answers the first."""
    key = {"Idempotency-Key": str(uuid.uuid4())}
    first = client.request(method, path, json=body, headers=key)
    assert first.status_code < 300, first.text
    again = client.request(method, path, json=body, headers=key)
    assert (again.status_code, again.headers.get("Idempotent-Replayed")) == (
        first.status_code,
        "true",
    ), again.text
    assert again.json() == first.json()
    if other is not None:
        error_of(client.request(method, path, json=other, headers=key), 409,
                 "idempotency_conflict")
    data: dict[str, Any] = first.json()
    return data


def test_edits_and_archive_replay_the_first_answer(service: RunningService) -> None:
    with service.partner() as client:
        bundle = client.post(
            "/bundles", json={"name": "B", "monthly_sending_volume": 5, "send_on_weekends": True}
        ).json()["data"]
        path = f"/bundles/{bundle['id']}"
        edited = twice(client, "PATCH", path, {"name": "First"}, {"name": "Other"})
        assert edited["data"]["name"] == "First"
        archived = twice(client, "POST", f"{path}/archive", None, None)
        assert archived["data"]["status"] == "archived"
        workspace = new_workspace(client)
        renamed = twice(
            client, "PATCH", f"/workspaces/{workspace}", {"name": "Renamed"}, {"name": "Else"}
        )
        assert renamed["data"]["name"] == "Renamed"
        order = placed(client, counts(workspace, a=1))
        domain_id = order["domains"][0]["id"]
        renew = twice(client, "PATCH", f"/domains/{domain_id}", {"auto_renew": False},
                      {"auto_renew": True})
        assert renew["data"]["auto_renew"] is False
        assert client.get(f"/domains/{domain_id}").json()["data"]["auto_renew"] is False


def test_pool_add_and_remove_replay_the_first_answer(service: RunningService) -> None:
    with service.partner() as client:
        names = ordered_domains(client, a=2)
        added = twice(client, "POST", "/pool/add", {"domains": names[:1]}, {"domains": names})
        assert added["data"]["added"] == 1, added
        removed = twice(client, "POST", "/pool/remove", {"domains": names[:1]},
                        {"domains": names})
        assert removed["data"]["removed"] == 1, removed
        # Without a key the same removal finds the domain absent: it was removed once only.
        assert remove(client, names[0]).json()["data"]["absent"] == 1


def test_a_retried_test_event_or_redelivery_is_made_once(service: RunningService) -> None:
    with service.partner() as client:
        sent = twice(client, "POST", "/webhook_endpoint/test", None, None)
        event_id = sent["data"]["id"]
        tests = client.get("/events", params={"type": "webhook.test"}).json()["data"]
        assert [row["id"] for row in tests] == [event_id]
        before = client.get(f"/events/{event_id}").json()["data"]["attempt_count"]
        twice(client, "POST", f"/events/{event_id}/redeliver", None, None)
        after = client.get(f"/events/{event_id}").json()["data"]["attempt_count"]
        assert after <= before + 1


def test_openapi_offers_the_key_on_every_changing_operation(service: RunningService) -> None:
    with service.client() as anonymous:
        schema = anonymous.get("/schema/openapi.json").json()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if method not in ("post", "patch", "put") or operation["operationId"] in READS:
                continue
            names = [p.get("name") for p in operation.get("parameters", [])]
            assert "Idempotency-Key" in names, (method, path)


READS = {"checkDomainAvailability", "createQuote", "generateDomains"}
