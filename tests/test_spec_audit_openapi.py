"""The response shapes documented in the OpenAPI document (decisions.md: "document it in the
OpenAPI schema") are the shapes the service answers: real responses decode strictly into the
documented structs, every answered key is documented and every required one is answered."""

from __future__ import annotations

from typing import Any

import httpx
import msgspec
from conftest import RunningService
from pool_support import attach, finished, pooled
from test_orders_sandbox import counts, new_workspace, placed
from test_pool_burned import burn
from test_wallet_purchase import credit

from views.domains import (
    DomainOut,
    DomainPage,
    DomainResponse,
    GeneratedOut,
    GeneratedResponse,
    Tld,
    TldPage,
)
from views.events import (
    EndpointOut,
    EndpointResponse,
    EndpointSecretOut,
    EndpointSecretResponse,
    EventOut,
    EventPage,
    EventResponse,
)
from views.jobs import ForwardingJobOut, ForwardingJobResponse
from views.orders import (
    PriceLine,
    QuoteOut,
    QuoteResponse,
    ResolvedActionOut,
    ResolvedActionResponse,
)
from views.pool import (
    BurnedJobOut,
    BurnedJobResponse,
    PoolAddOutcome,
    PoolAddResponse,
    PoolAddResult,
    PoolDomainOut,
    PoolDomainPage,
    ReleaseOut,
    ReleaseResponse,
    ReplacementOut,
    ReplacementResponse,
    ReservationOut,
    ReservationResponse,
)
from views.wallet import WalletEntry, WalletOut, WalletResponse


def keys_match(item: dict[str, Any], shape: type[msgspec.Struct]) -> None:
    """Every key answered is documented; every documented key without a default is answered."""
    info = msgspec.inspect.type_info(shape)
    assert isinstance(info, msgspec.inspect.StructType)
    required = {f.encode_name for f in info.fields if f.required}
    documented = {f.encode_name for f in info.fields}
    assert required <= set(item) <= documented, (shape.__name__, sorted(item))


def decoded(
    response: httpx.Response, status: int, envelope: type[msgspec.Struct], shape: Any
) -> Any:
    """The `data` of a response with `status`, decoded strictly into its documented envelope."""
    assert response.status_code == status, response.text
    msgspec.json.decode(response.content, type=envelope, strict=True)
    data = response.json()["data"]
    for item in data if isinstance(data, list) else [data]:
        keys_match(item, shape)
    return data


def test_quote_wallet_and_catalog_answer_their_documented_shape(service: RunningService) -> None:
    with service.partner() as client:
        body = counts(new_workspace(client), a=1)
        quote = decoded(client.post("/quotes", json=body), 200, QuoteResponse, QuoteOut)
        assert "wallet_balance_cents" not in quote
        for line in quote["lines"]:
            keys_match(line, PriceLine)
        tlds = decoded(client.get("/domains/tlds", params={"per_page": 2}), 200, TldPage, Tld)
        assert len(tlds) == 2
        generated = client.post("/domains/generate", json={"keywords": ["acme"], "limit": 3})
        decoded(generated, 200, GeneratedResponse, GeneratedOut)
    org = service.new_org()
    credit(service, org, 10_000)
    with service.client(service.new_key(org, "live")) as live:
        body = counts(new_workspace(live), a=1)
        quote = decoded(live.post("/quotes", json=body), 200, QuoteResponse, QuoteOut)
        assert quote["covered_by_wallet"] is True
        wallet = decoded(live.get("/wallet"), 200, WalletResponse, WalletOut)
        keys_match(wallet["entries"][0], WalletEntry)


def test_domains_and_forwarding_answer_their_documented_shape(service: RunningService) -> None:
    with service.partner() as client:
        client.post("/domains/import", json={"domains": ["shape-fw.com"]})
        url = "https://landing.example/"
        sent = client.post(
            "/domains/forwarding", json={"domains": ["shape-fw.com"], "forwarding_url": url}
        )
        job = decoded(sent, 201, ForwardingJobResponse, ForwardingJobOut)
        shown = client.get(f"/domains/forwarding/jobs/{job['id']}")
        assert decoded(shown, 200, ForwardingJobResponse, ForwardingJobOut)["id"] == job["id"]
        assert placed(client, counts(new_workspace(client), a=1))["status"] == "completed"
        rows = decoded(client.get("/domains"), 200, DomainPage, DomainOut)
        assert {row["category"] for row in rows} == {"inventory", "connected"}
        for row in rows:
            one = client.get(f"/domains/{row['id']}")
            assert decoded(one, 200, DomainResponse, DomainOut) == row


def test_events_and_endpoint_answer_their_documented_shape(service: RunningService) -> None:
    with service.partner() as client:
        decoded(client.get("/webhook_endpoint"), 200, EndpointResponse, EndpointOut)
        saved = service.put_webhook(client, "https://8.8.8.8/hook")
        decoded(saved, 200, EndpointSecretResponse, EndpointSecretOut)
        rotated = service.live_twin(client).post("/webhook_endpoint/rotate_secret")
        decoded(rotated, 200, EndpointSecretResponse, EndpointSecretOut)
        decoded(client.get("/webhook_endpoint"), 200, EndpointResponse, EndpointOut)
        event = decoded(client.post("/webhook_endpoint/test"), 202, EventResponse, EventOut)
        decoded(client.get(f"/events/{event['id']}"), 200, EventResponse, EventOut)
        decoded(client.get("/events"), 200, EventPage, EventOut)
        again = client.post(f"/events/{event['id']}/redeliver")
        decoded(again, 202, EventResponse, EventOut)


def test_resolved_action_answers_its_documented_shape(service: RunningService) -> None:
    with service.partner() as client:
        body = counts(new_workspace(client), a=1, profile_picture_url="http://10.0.0.1/p")
        order = placed(client, body)
        resolve = f"/orders/pending/{order['pending_action_id']}/resolve"
        good = client.post(resolve, json={"profile_picture_url": "https://cdn.example.com/a.png"})
        resolved = decoded(good, 200, ResolvedActionResponse, ResolvedActionOut)
        assert resolved["order"]["id"] == order["id"]


def test_pool_answers_its_documented_shape(service: RunningService) -> None:
    with service.partner() as client:
        names = pooled(client, 1)
        extra = pooled_again(client)
        added = client.post("/pool/add", json={"domains": [*names, extra]})
        outcomes = decoded(added, 200, PoolAddResponse, PoolAddResult)["domains"]
        for outcome in outcomes:
            keys_match(outcome, PoolAddOutcome)
        decoded(client.get("/pool/domains"), 200, PoolDomainPage, PoolDomainOut)
        reserved = attach(client, new_workspace(client), 2)
        reservation = decoded(reserved, 202, ReservationResponse, ReservationOut)
        reservation = finished(client, f"/pool/reservations/{reservation['id']}")
        shown = client.get(f"/pool/reservations/{reservation['id']}")
        assert decoded(shown, 200, ReservationResponse, ReservationOut) == reservation
        taken = [d["domain"] for d in reservation["domains"]]
        released = client.post("/pool/release", json={"domains": [taken[0]]})
        release = decoded(released, 202, ReleaseResponse, ReleaseOut)
        finished(client, f"/pool/releases/{release['id']}")
        decoded(client.get(f"/pool/releases/{release['id']}"), 200, ReleaseResponse, ReleaseOut)
        job = burn(service, taken[1])
        shown = client.get(f"/pool/burned_domain_jobs/{job['id']}")
        decoded(shown, 200, BurnedJobResponse, BurnedJobOut)
        replaced = client.get(f"/pool/replacements/{job['replacement_id']}")
        decoded(replaced, 200, ReplacementResponse, ReplacementOut)


def pooled_again(client: httpx.Client) -> str:
    """A domain owned but not yet pooled, so that an add answers both outcomes."""
    return str(placed(client, counts(new_workspace(client), a=1))["domains"][0]["domain"])


DOCUMENTED = {
    ("/quotes", "post", "200"): "QuoteResponse",
    ("/wallet", "get", "200"): "WalletResponse",
    ("/domains/tlds", "get", "200"): "TldPage",
    ("/domains/generate", "post", "200"): "GeneratedResponse",
    ("/domains", "get", "200"): "DomainPage",
    ("/domains/{domain_id}", "get", "200"): "DomainResponse",
    ("/domains/forwarding", "post", "201"): "ForwardingJobResponse",
    ("/domains/forwarding/jobs/{job_id}", "get", "200"): "ForwardingJobResponse",
    ("/events", "get", "200"): "EventPage",
    ("/events/{event_id}", "get", "200"): "EventResponse",
    ("/events/{event_id}/redeliver", "post", "202"): "EventResponse",
    ("/events/redeliver", "post", "202"): "RedeliveredResponse",
    ("/webhook_endpoint", "get", "200"): "EndpointResponse",
    ("/webhook_endpoint", "put", "200"): "EndpointSecretResponse",
    ("/webhook_endpoint/rotate_secret", "post", "200"): "EndpointSecretResponse",
    ("/webhook_endpoint/test", "post", "202"): "EventResponse",
    ("/orders/pending/{action_id}/resolve", "post", "200"): "ResolvedActionResponse",
    ("/pool/add", "post", "200"): "PoolAddResponse",
    ("/pool/domains", "get", "200"): "PoolDomainPage",
    ("/pool/attach", "post", "202"): "ReservationResponse",
    ("/pool/reservations/{reservation_id}", "get", "200"): "ReservationResponse",
    ("/pool/release", "post", "202"): "ReleaseResponse",
    ("/pool/releases/{release_id}", "get", "200"): "ReleaseResponse",
    ("/pool/replacements/{replacement_id}", "get", "200"): "ReplacementResponse",
    ("/pool/burned_domain_jobs/{job_id}", "get", "200"): "BurnedJobResponse",
}

FILTER_ENUMS = {
    ("/events", "status"): {"pending", "delivered", "failed"},
    ("/orders", "status"): {
        "in_progress", "completed", "failed", "action_required", "cancel_scheduled", "cancelled"
    },
    ("/orders/pending", "status"): {"pending", "resolved", "cancelled"},
    ("/domains", "category"): {"inventory", "connected"},
    ("/domains", "status"): {"available", "in_progress", "active", "failed", "action_required"},
    ("/pool/domains", "condition"): {
        "available", "warming", "idle_quarantined", "assigned", "reserved", "releasing"
    },
    ("/workspaces", "provider"): {"u", "i", "m", "w"},
    ("/bundles", "status"): {"active", "archived"},
    ("/domains/import/jobs", "status"): {
        "in_progress", "completed", "failed", "action_required"
    },
    ("/swaps", "status"): {"created", "in_progress", "completed", "failed", "action_required"},
    ("/swaps", "type"): {"standard", "premium", "user_names"},
}


def test_openapi_names_each_shape_and_filter_values(service: RunningService) -> None:
    with service.partner() as client:
        paths = client.get("/schema/openapi.json").json()["paths"]
    for (path, method, status), name in DOCUMENTED.items():
        response = paths[f"/partner/v1{path}"][method]["responses"][status]
        schema = response["content"]["application/json"]["schema"]
        assert schema["$ref"] == f"#/components/schemas/{name}", (path, schema)
    for (path, name), values in FILTER_ENUMS.items():
        parameters = paths[f"/partner/v1{path}"]["get"]["parameters"]
        (found,) = [p for p in parameters if p["name"] == name and p["in"] == "query"]
        assert set(found["schema"]["enum"]) == values, (path, name, found)


BODY_BOUNDS = {
    ("/domains/generate", "keywords"): {"minItems": 1, "maxItems": 10},
    ("/domains/generate", "limit"): {"minimum": 1, "maximum": 150},
    ("/domains/import", "domains"): {"minItems": 1, "maxItems": 50},
    ("/domains/import/jobs", "domains"): {"minItems": 1, "maxItems": 500},
    ("/domains/forwarding", "domains"): {"minItems": 1, "maxItems": 50},
    ("/pool/add", "domains"): {"minItems": 1, "maxItems": 25, "uniqueItems": True},
    ("/pool/release", "domains"): {"minItems": 1, "maxItems": 25, "uniqueItems": True},
    ("/pool/attach", "quantity"): {"minimum": 1},  # a shortage is 409 however large
    ("/bundles", "monthly_sending_volume"): {"minimum": 1, "maximum": 100_000_000},
    ("/bundles", "suite_a_percent"): {"minimum": 0, "maximum": 100},
    ("/bundles", "suite_a_licenses"): {"minimum": 1, "maximum": 50},
}


def test_body_bounds_are_documented_and_enforced(service: RunningService) -> None:
    with service.partner() as client:
        document = client.get("/schema/openapi.json").json()
        schemas = document["components"]["schemas"]
        for (path, name), bounds in BODY_BOUNDS.items():
            body = document["paths"][f"/partner/v1{path}"]["post"]["requestBody"]
            schema = body["content"]["application/json"]["schema"]
            schema = schemas[schema["$ref"].rsplit("/", 1)[-1]] if "$ref" in schema else schema
            documented = schema["properties"][name]
            assert bounds.items() <= documented.items(), (path, name, documented)
        # The service, not msgspec, enforces them: one past each edge is refused on its field
        # (a quantity the pool cannot fill is 409 `insufficient_inventory`, as documented).
        workspace, many = new_workspace(client), [f"n{i}.com" for i in range(501)]
        url = "https://landing.example/"
        bundle = {"name": "B", "monthly_sending_volume": 1000, "send_on_weekends": False}
        past = {
            "/domains/generate": ({"keywords": [f"k{i}" for i in range(11)]}, "keywords", 400),
            "/domains/import/jobs": ({"domains": many}, "domains", 400),
            "/domains/forwarding": ({"domains": [], "forwarding_url": url}, "domains", 400),
            "/pool/add": ({"domains": ["a.com", "a.com"]}, "domains", 400),
            "/pool/attach": ({"workspace_id": workspace, "quantity": 101}, "quantity", 409),
            "/bundles": ({**bundle, "suite_a_percent": 101}, "suite_a_percent", 400),
        }
        for path, (sent, field, status) in past.items():
            answer = client.post(path, json=sent)
            assert answer.status_code == status, (path, answer.text)
            assert answer.json()["error"]["field"] == field, (path, answer.text)


EXTRA_ERRORS = {
    ("/workspaces", "post"): {"422", "503"},
    ("/workspaces/{workspace_id}", "patch"): {"422", "503"},
    ("/users", "post"): {"404", "422", "503"},
    ("/orders", "post"): {"402", "404"},
    ("/quotes", "post"): {"404"},
    ("/domains/purchase", "post"): {"402", "404"},
    ("/domains/import", "post"): {"404"},
    ("/domains/import/jobs", "post"): {"404"},
    ("/pool/attach", "post"): {"404"},
    ("/swaps", "post"): {"402", "404"},
    ("/swaps/user_names", "post"): {"404"},
}


def test_errors_beyond_the_shared_list_are_documented_and_answered(
    service: RunningService,
) -> None:
    with service.partner() as client:
        paths = client.get("/schema/openapi.json").json()["paths"]
        for (path, method), statuses in EXTRA_ERRORS.items():
            responses = paths[f"/partner/v1{path}"][method]["responses"]
            for status in statuses:
                schema = responses[status]["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/ErrorEnvelope"}, (path, status)
        refused = client.post(
            "/workspaces",
            json={"name": "W", "provider": "u", "credentials": {"api_key": "invalid"}},
            headers={"Idempotency-Key": "spec-audit-openapi-422"},
        )
        assert refused.status_code == 422, refused.text
        unknown = {"workspace_id": "wrk_" + "0" * 32, "quantity": 1}
        assert client.post("/pool/attach", json=unknown).status_code == 404
        persona = {"first_name": "Ann", "last_name": "Lee"}
        rename = {"domain": "never-ordered.com", "personas": [persona]}
        assert client.post("/swaps/user_names", json=rename).status_code == 404


def test_every_error_code_is_documented_with_its_status(service: RunningService) -> None:
    """decisions 4: a code beyond the spec's list is allowed when documented."""
    with service.partner() as client:
        document = client.get("/schema/openapi.json").json()
        wrong_method = client.delete("/me")
    code = document["components"]["schemas"]["ErrorEnvelope"]["properties"]["error"]
    code = code["properties"]["code"]
    assert wrong_method.json()["error"]["code"] == "method_not_allowed"
    for name in ("method_not_allowed", "idempotency_in_progress", "insufficient_funds",
                 "internal_error", "sequencer_client_not_found"):
        assert name in code["enum"]
    assert "`method_not_allowed` 405" in code["description"]
    create_order = document["paths"]["/partner/v1/orders"]["post"]["responses"]["409"]
    assert "idempotency_in_progress" in create_order["description"]


def test_replay_header_and_rate_limit_details_are_documented(service: RunningService) -> None:
    """decisions 4: what a partner sees is in the schema: `Idempotent-Replayed` on the answers
    of idempotent operations, `details.retry_after_seconds` on 429, and no status that is
    never answered (415)."""
    with service.partner() as client:
        document = client.get("/schema/openapi.json").json()
    create_order = document["paths"]["/partner/v1/orders"]["post"]["responses"]
    assert "Idempotent-Replayed" in create_order["201"]["headers"]
    error = document["components"]["schemas"]["ErrorEnvelope"]["properties"]["error"]
    assert "retry_after_seconds" in error["properties"]["details"]["properties"]
    for item in document["paths"].values():
        for operation in item.values():
            if isinstance(operation, dict):
                assert "415" not in operation.get("responses", {})
    assert "unsupported_media_type" not in error["properties"]["code"]["enum"]


def test_no_made_up_response_examples_and_one_document_on_both_pages(
    service: RunningService,
) -> None:
    """Litestar's generated examples contradicted the schema (random text as a timestamp); the
    interactive page shows the same document as `openapi.json`, envelope included."""
    with service.client() as client:
        page = client.get("/schema")
        document = client.get("/schema/openapi.json").json()
    examples = [
        (path, method, status)
        for path, item in document["paths"].items()
        for method, operation in item.items() if isinstance(operation, dict)
        for status, response in operation.get("responses", {}).items()
        for media in (response.get("content") or {}).values() if "examples" in media
    ]
    assert examples == []
    assert page.status_code == 200 and "ErrorEnvelope" in page.text


def test_webhooks_are_described_in_the_document(service: RunningService) -> None:
    """OpenAPI 3.1 `webhooks`: each event type of spec 6 with the envelope and the signing
    headers a receiver verifies."""
    with service.client() as client:
        document = client.get("/schema/openapi.json").json()
    hooks = document["webhooks"]
    assert {"order.completed", "swap.action_required", "pool.attach_completed"} <= set(hooks)
    post = hooks["order.completed"]["post"]
    assert {p["name"] for p in post["parameters"]} == {
        "Service-Event-Id", "Service-Timestamp", "Service-Signature"}
    envelope = document["components"]["schemas"]["WebhookEvent"]
    assert envelope["required"] == ["id", "type", "created_at", "data"]
    assert "order.completed" in envelope["properties"]["type"]["enum"]
