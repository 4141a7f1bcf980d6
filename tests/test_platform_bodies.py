"""Idempotency (spec 8), strict bodies and size limits through HTTP on a real endpoint."""

from __future__ import annotations

import threading

from conftest import RunningService

WORKSPACE = {"name": "Acme outbound", "provider": "u", "credentials": {"api_key": "ws_key_1"}}


def test_missing_idempotency_key(service: RunningService) -> None:
    with service.partner() as client:
        response = client.post("/workspaces", json=WORKSPACE)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "idempotency_key_required"


def test_same_key_same_body_replays_first_response(service: RunningService) -> None:
    with service.partner() as client:
        first = client.post("/workspaces", json=WORKSPACE, headers={"Idempotency-Key": "k-1"})
        # Same JSON value with other key order and spacing is the same request.
        reordered = '{"provider":"u","credentials":{"api_key":"ws_key_1"},"name":"Acme outbound"}'
        again = client.post(
            "/workspaces",
            content=reordered,
            headers={"Idempotency-Key": "k-1", "Content-Type": "application/json"},
        )
        assert first.status_code == 201
        assert again.status_code == first.status_code
        assert again.json() == first.json()
        assert again.headers["Service-Request-Id"] != first.headers["Service-Request-Id"]
        listed = client.get("/workspaces").json()["data"]
    assert len(listed) == 1


def test_same_key_other_body_conflicts(service: RunningService) -> None:
    with service.partner() as client:
        client.post("/workspaces", json=WORKSPACE, headers={"Idempotency-Key": "k-2"})
        other = {**WORKSPACE, "name": "Other"}
        response = client.post("/workspaces", json=other, headers={"Idempotency-Key": "k-2"})
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "idempotency_conflict"


def test_keys_are_scoped_per_organization(service: RunningService) -> None:
    with service.partner() as first, service.partner() as second:
        a = first.post("/workspaces", json=WORKSPACE, headers={"Idempotency-Key": "shared"})
        b = second.post("/workspaces", json=WORKSPACE, headers={"Idempotency-Key": "shared"})
    assert a.status_code == b.status_code == 201
    assert a.json()["data"]["workspace_id"] != b.json()["data"]["workspace_id"]


def test_concurrent_same_key_creates_once(service: RunningService) -> None:
    results: list[int] = []
    secret = service.new_key(service.new_org())

    def post() -> None:
        with service.client(secret) as client:
            response = client.post(
                "/workspaces", json=WORKSPACE, headers={"Idempotency-Key": "race"}
            )
            results.append(response.status_code)

    threads = [threading.Thread(target=post) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(results) <= {201, 409}
    with service.client(secret) as client:
        assert len(client.get("/workspaces").json()["data"]) == 1


def test_unknown_property_names_its_field(service: RunningService) -> None:
    with service.partner() as client:
        response = client.post(
            "/workspaces", json={**WORKSPACE, "colour": "blue"}, headers={"Idempotency-Key": "u1"}
        )
    error = response.json()["error"]
    assert response.status_code == 400
    assert error["code"] == "invalid_request" and error["field"] == "colour"


def test_an_unknown_property_named_by_the_empty_string_is_named_too(
    service: RunningService,
) -> None:
    """Decisions 4: `field` is set for every unknown property, `""` included (its dot path)."""
    with service.partner() as client:
        workspace = client.post(
            "/workspaces", json=WORKSPACE, headers={"Idempotency-Key": "e0"}
        ).json()["data"]["workspace_id"]
        for path, body, field in (
            ("/bundles", {"name": "B", "monthly_sending_volume": 1000, "": 1}, ""),
            ("/sandbox/clock/advance", {"seconds": 5, "": 1}, ""),
            ("/orders", {"destination": {"workspace_id": workspace, "": 1},
                         "suite_a": {"domains": 1, "inboxes_per_domain": 1}}, "destination."),
            ("/workspaces", {"provider": "u", "credentials": {"api_key": "k", "": 1}},
             "credentials."),
        ):
            response = client.post(path, json=body, headers={"Idempotency-Key": f"e-{path}"})
            assert response.status_code == 400, (path, response.text)
            assert response.json()["error"]["field"] == field, (path, response.text)
        # Only suite_b sent, with no domain: the field is the one sent.
        only_b = {"destination": {"workspace_id": workspace},
                  "suite_b": {"domains": 0, "inboxes_per_domain": 1}}
        for path in ("/orders", "/quotes"):
            response = client.post(path, json=only_b, headers={"Idempotency-Key": "e-b"})
            assert response.status_code == 400, response.text
            assert response.json()["error"]["field"] == "suite_b.domains", response.text


def test_malformed_json_is_400_envelope(service: RunningService) -> None:
    with service.partner() as client:
        response = client.post(
            "/workspaces",
            content=b"{not json",
            headers={"Idempotency-Key": "m1", "Content-Type": "application/json"},
        )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_request"


def test_a_body_cut_short_is_not_json_whatever_it_began_with(service: RunningService) -> None:
    # msgspec checks fields while it parses: `{"a":` used to be "unknown field 'a'".
    with service.partner() as client:
        for path, body in (("/domains/availability", b'{"a":'), ("/bundles", b'{"name": 5')):
            response = client.post(path, content=body,
                                   headers={"Content-Type": "application/json"})
            assert response.status_code == 400, response.text
            error = response.json()["error"]
            assert error["code"] == "invalid_request" and "not valid JSON" in error["message"]
            assert "field" not in error, error


def test_bad_utf8_inside_a_string_is_400_envelope(service: RunningService) -> None:
    bodies = {
        "/domains/availability": b'{"domains":["\xff\xfe.com"]}',
        "/workspaces": b'{"name":"\xc3","provider":"u","credentials":{"api_key":"k"}}',
        "/bundles": b'{"name":"\xc3","monthly_sending_volume":1000,"send_on_weekends":false}',
        "/orders": b'{"destination":{"workspace_id":"wrk_\xff"}}',
    }
    with service.partner() as client:
        for path, body in bodies.items():
            response = client.post(
                path,
                content=body,
                headers={"Idempotency-Key": f"u-{path}", "Content-Type": "application/json"},
            )
            assert response.status_code == 400, (path, response.text)
            assert response.json()["error"]["code"] == "invalid_request"


def test_oversized_body_is_413_envelope(service: RunningService) -> None:
    with service.partner() as client:
        huge = {**WORKSPACE, "name": "x" * (2 * 1024 * 1024)}
        response = client.post("/workspaces", json=huge, headers={"Idempotency-Key": "big"})
    assert response.status_code == 413
    error = response.json()["error"]
    assert error["code"] == "payload_too_large"
    assert error["request_id"] == response.headers["Service-Request-Id"]


def test_read_key_cannot_write(service: RunningService) -> None:
    with service.partner(preset="read") as client:
        response = client.post("/workspaces", json=WORKSPACE, headers={"Idempotency-Key": "r"})
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"


def test_body_field_paths() -> None:
    from gateway.rest.errors import body_field

    assert body_field("n", "Expected `int`, got `str`") == "n"
    assert body_field("credentials", "Object contains unknown field `foo`") == "credentials.foo"
    assert body_field("data", "Object contains unknown field `zz`") == "zz"
    assert body_field("data", "Object missing required field `n`") == "n"
    assert body_field("items[0].api_key", "Expected `str`, got `int`") == "items[0].api_key"


def test_wrong_type_names_its_field(service: RunningService) -> None:
    with service.partner() as client:
        response = client.post(
            "/bundles",
            json={"name": "B", "monthly_sending_volume": "many", "send_on_weekends": False},
        )
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "monthly_sending_volume"


def test_bodies_are_decoded_strictly(service: RunningService) -> None:
    """A JSON string is not a number nor a boolean, on every body (not only POST /orders)."""
    with service.partner() as client:
        cases = [
            ("/bundles", {"name": "B", "monthly_sending_volume": "10000",
                          "send_on_weekends": False}, "monthly_sending_volume"),
            ("/bundles", {"name": "B", "monthly_sending_volume": 10000,
                          "send_on_weekends": "true"}, "send_on_weekends"),
            ("/pool/attach", {"workspace_id": "wrk_" + "0" * 32, "quantity": "1"}, "quantity"),
            ("/domains/generate", {"keywords": ["acme"], "limit": 1.5}, "limit"),
        ]
        for path, body, field in cases:
            response = client.post(path, json=body)
            assert response.status_code == 400, (path, response.text)
            error = response.json()["error"]
            assert (error["code"], error["field"]) == ("invalid_request", field), path
        nested = client.post(
            "/workspaces", json={**WORKSPACE, "credentials": {"api_key": 5}},
            headers={"Idempotency-Key": "strict-1"},
        ).json()["error"]
        assert nested["field"] == "credentials.api_key"
        assert client.get("/bundles").json()["data"] == []


def test_whole_numbers_written_as_floats_are_integers(service: RunningService) -> None:
    """The OpenAPI 3.1 document's JSON Schema counts 10000.0 and 1e4 as integers, so a body
    valid against it is accepted; a fraction is still refused with its field."""
    with service.partner() as client:
        bundle = client.post(
            "/bundles", content=b'{"name": "B", "monthly_sending_volume": 1e4, '
            b'"send_on_weekends": false, "suite_a_licenses": 2.0}',
            headers={"Content-Type": "application/json"},
        )
        assert bundle.status_code == 201, bundle.text
        assert bundle.json()["data"]["monthly_sending_volume"] == 10000
        assert bundle.json()["data"]["suite_a_licenses"] == 2
        workspace = client.post(
            "/workspaces", json=WORKSPACE, headers={"Idempotency-Key": "whole-1"}
        ).json()["data"]["workspace_id"]
        order = client.post(
            "/orders", content=b'{"destination": {"workspace_id": "%s"}, '
            b'"suite_a": {"domains": 1.0, "inboxes_per_domain": 2.0}}' % workspace.encode(),
            headers={"Idempotency-Key": "whole-2", "Content-Type": "application/json"},
        )
        assert order.status_code == 201, order.text
        assert order.json()["data"]["licenses"]["suite_a"] == 2
        fraction = client.post(
            "/orders", content=b'{"destination": {"workspace_id": "%s"}, '
            b'"suite_a": {"domains": 1.5, "inboxes_per_domain": 2}}' % workspace.encode(),
            headers={"Idempotency-Key": "whole-3", "Content-Type": "application/json"},
        ).json()["error"]
        # A whole float where a string belongs, or one past int64, is reported as sent.
        name = client.post("/bundles", json={"name": 5.0, "monthly_sending_volume": 1,
                                             "send_on_weekends": False}).json()["error"]
        huge = client.post("/pool/attach", content=b'{"workspace_id": "%s", "quantity": 1e300}'
                           % workspace.encode(),
                           headers={"Content-Type": "application/json"}).json()["error"]
    assert (fraction["code"], fraction["field"]) == ("invalid_request", "suite_a.domains")
    assert (name["field"], "float" in name["message"]) == ("name", True), name
    assert (huge["field"], "float" in huge["message"]) == ("quantity", True), huge


def test_a_body_nested_past_any_depth_we_read_is_400(service: RunningService) -> None:
    """Valid JSON nested thousands deep: refused as a body, never a 500."""
    deep = b'{"domains":' + b"[" * 5000 + b"]" * 5000 + b"}"
    nul = b'{"domains":' + b"[" * 990 + b'"\\u0000"' + b"]" * 990 + b"}"
    with service.partner() as client:
        for path in ("/domains/availability", "/orders", "/pool/remove", "/bundles",
                     "/webhook_endpoint"):
            response = client.post(path, content=nul, headers={
                "Idempotency-Key": f"nul-{path}", "Content-Type": "application/json"})
            assert response.status_code in (400, 405), (path, response.text)
            method = service.live_twin(client).put if path == "/webhook_endpoint" else client.post
            response = method(path, content=deep, headers={
                "Idempotency-Key": f"deep-{path}", "Content-Type": "application/json"})
            assert response.status_code == 400, (path, response.text)
            assert response.json()["error"]["code"] == "invalid_request"
