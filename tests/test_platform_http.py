"""Spec 4.1 (GET /me), 5 (auth), 7 (errors), 8 (rate limit) through HTTP against a running app."""

from __future__ import annotations

import uuid

from conftest import RunningService

from infra.clock import ManualClock
from projections.runner import READ_YOUR_WRITES_SECONDS


def _request_id(response) -> str:  # type: ignore[no-untyped-def]
    value = response.headers["Service-Request-Id"]
    uuid.UUID(value)
    return str(value)


def test_me_reports_sandbox_key(service: RunningService) -> None:
    org = service.new_org("Acme Outbound")
    with service.client(service.new_key(org, "test", "limited")) as client:
        response = client.get("/me")
    assert response.status_code == 200
    _request_id(response)
    assert response.json()["data"] == {
        "api_key": {"environment": "test", "permission_preset": "limited"},
        "partner": {"id": org, "name": "Acme Outbound"},
    }


def test_me_reports_live_key(service: RunningService) -> None:
    with service.partner(env="live", preset="read") as client:
        data = client.get("/me").json()["data"]
    assert data["api_key"] == {"environment": "live", "permission_preset": "read"}
    assert data["partner"]["id"].startswith("org_")


def test_key_secret_format(service: RunningService) -> None:
    org = service.new_org()
    live = service.new_key(org, "live")
    test = service.new_key(org, "test")
    assert live.startswith("pk_live_") and test.startswith("pk_test_")
    assert len(live) - len("pk_live_") >= 43  # 32 random bytes, base64url


def _assert_error(response, status: int, code: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code
    assert error["request_id"] == _request_id(response)
    assert error["message"]
    return error  # type: ignore[no-any-return]


def test_401_carries_the_bearer_challenge(service: RunningService) -> None:
    """RFC 6750 3: a 401 names the scheme; a refused key is an invalid token."""
    with service.client() as client:
        for path in ("/me", "/orders", "/no/such/thing"):
            assert client.get(path).headers["WWW-Authenticate"] == 'Bearer realm="partner-api"'
    with service.client() as client:
        basic = client.get("/me", headers={"Authorization": "Basic YTpi"})
        assert basic.headers["WWW-Authenticate"] == 'Bearer realm="partner-api"'
    with service.client("pk_test_" + "x" * 43) as client:
        for path in ("/me", "/orders"):
            assert client.get(path).headers["WWW-Authenticate"] == (
                'Bearer realm="partner-api", error="invalid_token"')
    with service.partner() as client:
        assert "WWW-Authenticate" not in client.get("/me").headers


def test_missing_malformed_unknown_keys_are_401(service: RunningService) -> None:
    with service.client() as client:
        _assert_error(client.get("/me"), 401, "unauthorized")
        _assert_error(client.get("/me", headers={"Authorization": "Basic abc"}), 401, "unauthorized")
        _assert_error(client.get("/me", headers={"Authorization": "Bearer"}), 401, "unauthorized")
        bogus = "pk_test_" + "x" * 43
        _assert_error(client.get("/me", headers={"Authorization": f"Bearer {bogus}"}), 401,
                      "unauthorized")


def test_rotation_and_immediate_revocation(service: RunningService) -> None:
    org = service.new_org()
    old = service.container.accounts.create_key(org, "test", "full")
    new = service.container.accounts.rotate_key(old.id)
    with service.client(old.secret) as a, service.client(new.secret) as b:
        assert a.get("/me").status_code == 200
        assert b.get("/me").status_code == 200
        service.container.accounts.revoke_key(old.id)
        _assert_error(a.get("/me"), 401, "unauthorized")
        assert b.get("/me").status_code == 200


def test_unknown_path_and_wrong_method_use_envelope(service: RunningService) -> None:
    with service.partner() as client:
        _assert_error(client.get("/no/such/thing"), 404, "not_found")
        response = client.delete("/me")
        assert response.status_code == 405
        assert response.json()["error"]["request_id"] == _request_id(response)
    # Spec 5: a request without a valid key gets 401, whatever its path or method.
    with service.client() as anonymous:
        _assert_error(anonymous.get("/definitely-missing"), 401, "unauthorized")
        _assert_error(anonymous.delete("/me"), 401, "unauthorized")
    with service.client("pk_test_not_a_key") as wrong:
        _assert_error(wrong.get("/definitely-missing"), 401, "unauthorized")
        assert wrong.get("/schema/openapi.json").status_code == 200  # public


def test_a_query_parameter_an_operation_does_not_take_is_refused(service: RunningService) -> None:
    """A misspelt filter would otherwise answer the whole list as if it had filtered it."""
    with service.partner() as client:
        workspace = client.post(
            "/workspaces", json={"provider": "u", "credentials": {"api_key": "key_good"}},
            headers={"Idempotency-Key": uuid.uuid4().hex},
        ).json()["data"]["workspace_id"]
        for method, path, params in (
            ("GET", "/orders", {"stauts": "completed"}),
            ("GET", "/bundles", {"status": "active", "limit": "5"}),
            ("GET", f"/workspaces/{workspace}", {"expand": "customer"}),
            ("POST", "/domains/availability", {"dry_run": "1"}),
            # A whole number is written as one (Litestar alone would read these as 10).
            ("GET", "/orders", {"per_page": "1e1"}),
            ("GET", "/bundles", {"per_page": "10.0"}),
            # An empty exact filter would widen to every row.
            ("GET", "/domains", {"domain": ""}),
            ("GET", "/domains/import/jobs", {"domain": " "}),
            ("GET", "/swaps", {"domain": ""}),
            ("GET", "/orders", {"workspace_id": ""}),
        ):
            response = client.request(
                method, path, params=params, json={"domains": ["a.com"]} if method == "POST" else None
            )
            error = _assert_error(response, 400, "invalid_request")
            assert error["field"] == list(params)[-1], (path, error)
        leading_zero = _assert_error(client.get("/orders", params={"per_page": "05"}), 400,
                                     "invalid_request")
        assert leading_zero["field"] == "per_page"
        assert leading_zero["message"].startswith("per_page must be a whole number")
        listed = client.get("/orders", params={"status": "completed", "per_page": 5})
        assert listed.status_code == 200, listed.text
        assert client.get(f"/workspaces/{workspace}").status_code == 200


def test_health_ready_metrics_and_openapi(service: RunningService) -> None:
    with service.client() as client:
        assert client.get(service.base_url + "/healthz").json() == {"status": "ok"}
        ready = client.get(service.base_url + "/readyz")
        assert ready.status_code == 200 and ready.json()["checks"]["event_store"] == "ok"
        with service.partner() as partner:
            partner.get("/me")
        text = client.get(service.base_url + "/metrics").text
        assert 'partner_api_requests_total{method="GET",route="/partner/v1/me",status="200"}' in text
        # decisions.md 1: latency by route and status too.
        assert 'partner_api_request_seconds_count{method="GET",route="/partner/v1/me",status="200"}' in text
        schema = client.get("/schema/openapi.json").json()
        assert schema["info"]["version"] == "1.0.0"
        assert "/partner/v1/me" in schema["paths"]
        assert client.get("/schema").status_code == 200


def test_rate_limit_429_with_retry_after(service_factory) -> None:  # type: ignore[no-untyped-def]
    clock = ManualClock()
    service = service_factory(clock=clock)
    with service.partner(rate_rps=1.0, rate_burst=3) as client:
        statuses = [client.get("/me") for _ in range(3)]
        assert [r.status_code for r in statuses] == [200, 200, 200]
        assert statuses[0].headers["RateLimit-Limit"] == "3"
        assert statuses[-1].headers["RateLimit-Remaining"] == "0"
        refused = client.get("/me")
        error = _assert_error(refused, 429, "rate_limited")
        assert refused.headers["Retry-After"] == "1"
        assert error["details"]["retry_after_seconds"] == 1
        clock.advance(1.0)
        assert client.get("/me").status_code == 200


def test_allowance_shared_by_keys_split_by_environment(service_factory) -> None:  # type: ignore[no-untyped-def]
    service = service_factory(clock=ManualClock())
    org = service.new_org(rate_rps=0.001, rate_burst=2)
    first, second = service.new_key(org, "test"), service.new_key(org, "test")
    live = service.new_key(org, "live")
    with service.client(first) as a, service.client(second) as b, service.client(live) as c:
        assert a.get("/me").status_code == 200
        assert b.get("/me").status_code == 200
        assert a.get("/me").status_code == 429
        assert b.get("/me").status_code == 429
        assert c.get("/me").status_code == 200  # live counter is separate


def test_bad_key_does_not_spend_allowance(service_factory) -> None:  # type: ignore[no-untyped-def]
    service = service_factory(clock=ManualClock())
    org = service.new_org(rate_rps=0.001, rate_burst=1)
    key = service.new_key(org)
    with service.client("pk_test_" + "y" * 43) as bad:
        for _ in range(5):
            assert bad.get("/me").status_code == 401
    with service.client(key) as good:
        assert good.get("/me").status_code == 200


def test_plain_me_answers_as_the_framework_route_does(service_factory) -> None:  # type: ignore[no-untyped-def]
    """`GET /me` is served as raw ASGI ahead of Litestar; the same service's app without that
    shortcut serves it through the framework. Both must answer with the same status, headers
    and body (the two share the organization's rate allowance)."""
    from litestar.testing import TestClient

    from gateway.rest.app import create_litestar
    from gateway.rest.request_id import RequestIdMiddleware

    service = service_factory(clock=ManualClock())
    org = service.new_org(rate_rps=0.001, rate_burst=4)
    app = RequestIdMiddleware(create_litestar(service.container), {})

    def shape(response) -> tuple[int, list[tuple[str, str]], object]:  # type: ignore[no-untyped-def]
        _request_id(response)
        headers = [
            (name, value if name.startswith(("content", "retry")) else "")
            for name, value in response.headers.items()
            if name not in ("service-request-id", "date", "server")
        ]
        body = response.json()
        if "error" in body:
            body["error"].pop("request_id")
        return response.status_code, headers, body

    def through_framework(headers: dict[str, str]):  # type: ignore[no-untyped-def]
        with TestClient(app=app, base_url=service.api) as framework:  # type: ignore[arg-type]
            return framework.get("/me", headers=headers)

    key = service.new_key(org, "test", "read")
    bearer = {"Authorization": f"Bearer {key}"}
    with service.client(key) as client:
        assert shape(client.get("/me")) == shape(through_framework(bearer))
        assert shape(client.get("/me")) == shape(through_framework(bearer))
        assert client.get("/me").status_code == 429
        assert shape(client.get("/me")) == shape(through_framework(bearer))
    for auth in ("", "Basic abc", "Bearer pk_test_" + "y" * 43):
        with service.client(None) as client:
            headers = {"Authorization": auth} if auth else {}
            plain = client.get("/me", headers=headers)
            assert plain.status_code == 401
            assert shape(plain) == shape(through_framework(headers))


def test_projection_lag_in_a_gateway_only_process(service_factory) -> None:  # type: ignore[no-untyped-def]
    """A gateway that does not run the projections reports the lag of the process that does,
    from the position it committed (two processes of one store, as in production)."""
    from projections.follower import tracked_position
    from projections.runner import READ_MODELS_TRACKING

    projecting = service_factory()
    gateway = service_factory(roles=["gateway"])
    projecting.new_org()
    projecting.wait_projections()
    container = gateway.container
    applied = tracked_position(container.read_models.db, READ_MODELS_TRACKING)
    head = container.store.recorder.max_notification_id() or 0
    assert applied > 0
    with gateway.client() as client:
        text = client.get(gateway.base_url + "/metrics").text
    assert f"partner_api_projection_lag_events {float(max(0, head - applied))}" in text


def test_a_write_answers_soon_while_the_projections_process_is_down(service_factory) -> None:  # type: ignore[no-untyped-def]
    """Read-your-writes waits for the projections; with their process down it must not hold
    every write for the whole bound (a client's default 5 s timeout would fire first)."""
    import time

    gateway = service_factory(roles=["gateway"])  # nobody runs the projections
    with gateway.partner() as client:
        assert client.get("/me").status_code == 200  # a first request may be slow: not timed
        started = time.monotonic()
        response = client.post(
            "/bundles",
            json={"name": "Stalled", "monthly_sending_volume": 10000, "send_on_weekends": False},
        )
        waited = time.monotonic() - started
    assert response.status_code == 201, response.text
    # It gave up once the projections stood still, well before the whole bound (a loaded
    # machine adds seconds to any request, so the bound itself is the line).
    assert waited < READ_YOUR_WRITES_SECONDS, waited


def test_options_allow_lists_every_method_of_the_path(service: RunningService) -> None:
    """RFC 9110 `Allow`: the methods the resource supports, all of them. Litestar listed only
    the methods of the path's first handler (`/orders` without GET)."""
    with service.partner() as client:
        answers = {
            path: client.options(path)
            for path in ("/orders", "/bundles/bun_0", "/swaps", "/domains/import/jobs")
        }
    assert {path: (r.status_code, r.headers["Allow"]) for path, r in answers.items()} == {
        "/orders": (204, "GET, HEAD, OPTIONS, POST"),
        "/bundles/bun_0": (204, "GET, HEAD, OPTIONS, PATCH"),
        "/swaps": (204, "GET, HEAD, OPTIONS, POST"),
        "/domains/import/jobs": (204, "GET, HEAD, OPTIONS, POST"),
    }
    for response in answers.values():
        _request_id(response)


def test_head_answers_as_get_without_content(service: RunningService) -> None:
    """RFC 9110 9.3.2: HEAD wherever GET is served, with GET's status and headers and no body;
    errors keep their status and request id."""
    with service.partner() as client:
        for path in ("/me", "/me?probe=1", "/orders?per_page=2", "/no/such/thing"):
            get, head = client.get(path), client.head(path)
            assert head.status_code == get.status_code, path
            assert head.content == b"", path
            assert head.headers["Content-Length"] == get.headers["Content-Length"], path
            assert head.headers["Content-Type"] == get.headers["Content-Type"], path
            _request_id(head)
        assert client.head("/orders/ord_missing").status_code == 404
        # RFC 9110 15.5.6: a 405 lists what the resource supports, HEAD included.
        refused = client.delete("/orders")
        assert (refused.status_code, refused.headers["Allow"]) == (405, "GET, HEAD, OPTIONS, POST")
    with service.client() as anonymous:
        assert anonymous.head("/me").status_code == 401
        assert anonymous.head("/me").content == b""


NOT_FOUND_PATHS = {
    ("GET", "/events/evt_nope"): "event_id",
    ("POST", "/events/evt_nope/redeliver"): "event_id",
    ("GET", "/workspaces/wrk_nope"): "workspace_id",
    ("GET", "/bundles/bun_nope"): "bundle_id",
    ("POST", "/bundles/bun_nope/archive"): "bundle_id",
    ("GET", "/users/usr_nope"): "user_id",
    ("GET", "/orders/ord_nope"): "order_id",
    ("POST", "/orders/ord_nope/cancel"): "order_id",
    ("GET", "/domains/dom_nope"): "domain_id",
    ("GET", "/domains/import/jobs/imp_nope"): "job_id",
    ("GET", "/domains/forwarding/jobs/fwj_nope"): "job_id",
    ("GET", "/pool/reservations/pcl_nope"): "reservation_id",
    ("GET", "/pool/releases/prl_nope"): "release_id",
    ("GET", "/swaps/swp_nope"): "swap_id",
}


def test_a_404_names_the_path_parameter_that_found_nothing(service: RunningService) -> None:
    with service.partner() as client:
        for (method, path), field in NOT_FOUND_PATHS.items():
            error = client.request(method, path).json()["error"]
            assert (error["code"], error.get("field")) == ("not_found", field), (path, error)
        unknown_route = client.get("/nowhere").json()["error"]
        assert unknown_route["code"] == "not_found" and "field" not in unknown_route


def test_an_id_is_exact_text_on_paths_bodies_and_filters_alike(service: RunningService) -> None:
    """Ids are opaque strings, as issued: one in another case finds nothing on a path or in a
    body, as it finds nothing in a list filter (which compares text)."""
    with service.partner() as client:
        workspace = client.post(
            "/workspaces", json={"provider": "u", "credentials": {"api_key": "key_good"}},
            headers={"Idempotency-Key": uuid.uuid4().hex},
        ).json()["data"]["workspace_id"]
        shouted = "wrk_" + workspace.removeprefix("wrk_").upper()
        assert client.get(f"/workspaces/{workspace}").status_code == 200
        error = _assert_error(client.get(f"/workspaces/{shouted}"), 404, "not_found")
        assert error["field"] == "workspace_id"
        quote = client.post("/quotes", json={
            "destination": {"workspace_id": shouted},
            "suite_a": {"domains": 1, "inboxes_per_domain": 1},
        })
        assert _assert_error(quote, 404, "not_found")["field"] == "destination.workspace_id"
        assert client.get("/orders", params={"workspace_id": shouted}).json()["data"] == []
