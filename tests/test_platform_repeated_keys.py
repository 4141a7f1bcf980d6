"""A JSON body that names a property twice, at any depth, is 400 invalid_request naming it."""

from __future__ import annotations

import uuid

import httpx
from conftest import RunningService
from test_orders_sandbox import error_of, new_workspace


def post_raw(client: httpx.Client, path: str, body: str) -> httpx.Response:
    headers = {"Idempotency-Key": str(uuid.uuid4()), "Content-Type": "application/json"}
    return client.post(path, content=body.encode(), headers=headers)


def test_repeated_keys_are_refused_with_their_path(service: RunningService) -> None:
    with service.partner() as client:
        workspace = new_workspace(client)
        destination = f'"destination": {{"workspace_id": "{workspace}"}}'
        suite = '{"domains": 1, "inboxes_per_domain": 1}'
        cases = {
            f'{{{destination}, "suite_a": {suite}, "suite_a": {suite}}}': "suite_a",
            f'{{"destination": {{"workspace_id": "{workspace}", "workspace_id": "x"}},'
            f' "suite_a": {suite}}}': "destination.workspace_id",
            f'{{{destination}, "suite_a": {{"domains": 1, "inboxes_per_domain": 1,'
            f' "domains": 2}}}}': "suite_a.domains",
            # The same name, one of them escaped: JSON makes them one property.
            f'{{{destination}, "suite_a": {suite}, "suite_\\u0061": {suite}}}': "suite_a",
        }
        for body, path in cases.items():
            error = error_of(post_raw(client, "/orders", body), 400, "invalid_request")
            assert error["field"] == path, (body, error)
            assert f"'{path.rsplit('.', 1)[-1]}'" in error["message"]
        assert client.get("/orders").json()["data"] == []
        placed = post_raw(client, "/orders", f'{{{destination}, "suite_a": {suite}}}')
        assert placed.status_code == 201, placed.text


def test_every_json_body_is_checked(service: RunningService) -> None:
    with service.partner() as client:
        listed = '{"domains": [{"domain": "a.com", "auto_renew": true, "auto_renew": false}]}'
        error = error_of(post_raw(client, "/domains/purchase", listed), 400, "invalid_request")
        assert error["field"] == "domains[0].auto_renew"
        twice = '{"domains": ["a.com"], "domains": ["b.com"]}'
        error = error_of(post_raw(client, "/domains/availability", twice), 400, "invalid_request")
        assert error["field"] == "domains"
        # Arrays of pairs are not objects; the same value twice is not a repeated name.
        fine = post_raw(client, "/domains/availability", '{"domains": ["a.com", "a.com"]}')
        assert fine.status_code == 200, fine.text


def test_a_query_parameter_given_twice_is_refused(service: RunningService) -> None:
    """The last one would silently win: `per_page=5&per_page=100` is ambiguous."""
    with service.partner() as client:
        twice = client.get("/orders", params=[("per_page", "5"), ("per_page", "1")])
        error = error_of(twice, 400, "invalid_request")
        assert error["field"] == "per_page" and "'per_page'" in error["message"]
        once_each = client.get("/orders", params=[("per_page", "5"), ("status", "completed")])
        assert once_each.status_code == 200, once_each.text
