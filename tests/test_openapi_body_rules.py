"""The rules the services check on request bodies are written in the OpenAPI document, so a body
valid against the published schema is one the service takes (schemathesis' positive-data check
found bodies the document allowed and the service refused), and each rule is still enforced."""

from __future__ import annotations

import json
from typing import Any

from conftest import RunningService

from schema.rules import TEXT
from services.accounts.commands import EMAIL_PATTERN

# (path, method, property path inside the body) -> JSON Schema keywords documented there.
RULES: dict[tuple[str, str, str], dict[str, Any]] = {
    ("/bundles", "post", "name"): {"minLength": 1, "maxLength": 200, "pattern": TEXT},
    ("/pool/add", "post", "domains.items"): {"minLength": 1, "pattern": TEXT},
    # Every other text: no NUL (`text_rules`), bodies decoded by hand included.
    ("/orders", "post", "destination.workspace_id"): {"pattern": "^[^\\u0000]*$"},
    ("/swaps", "post", "order_id"): {"pattern": "^[^\\u0000]*$"},
    ("/domains/generate", "post", "keywords.items"): {
        "pattern": "^[A-Za-z0-9]([A-Za-z0-9-]{0,38}[A-Za-z0-9])?$"
    },
    ("/domains/import", "post", "domains.items"): {"minLength": 1},
    ("/pool/remove", "post", "domains.items"): {"minLength": 1},
    ("/domains/purchase", "post", "domains.items.domain"): {"minLength": 1},
    ("/orders", "post", "personas.items.first_name"): {"minLength": 1, "pattern": TEXT},
    ("/orders", "post", "forwarding_url"): {"pattern": "^https?://[^\\s/?#]+"},
    ("/domains/forwarding", "post", "forwarding_url"): {"pattern": "^https?://[^\\s/?#]+"},
    ("/swaps/user_names", "post", "personas"): {"minItems": 1, "maxItems": 50},
    ("/users", "post", "email"): {"pattern": EMAIL_PATTERN},
    ("/users", "post", "first_name"): {"minLength": 1, "maxLength": 200},
    ("/domains/generate", "post", "prefixes.items"): {"pattern": "^[A-Za-z0-9][A-Za-z0-9-]{0,39}$"},
    ("/domains/generate", "post", "suffixes.items"): {"pattern": "^[A-Za-z0-9-]{0,39}[A-Za-z0-9]$"},
    ("/workspaces", "post", "provider"): {"enum": ["u", "i", "m", "w"]},
    ("/webhook_endpoint", "put", "url"): {"pattern": "^https://[^\\s/?#]+"},
}


def _resolve(node: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schemas[node["$ref"].rsplit("/", 1)[-1]]
    for branch in node.get("oneOf", node.get("anyOf", [])):  # `T | None`: the T branch
        if branch.get("type") != "null":
            return {**_resolve(branch, schemas), **{k: v for k, v in node.items()
                                                     if k not in ("oneOf", "anyOf")}}
    return node


def documented_at(document: dict[str, Any], path: str, method: str, where: str) -> dict[str, Any]:
    schemas = document["components"]["schemas"]
    body = document["paths"][f"/partner/v1{path}"][method]["requestBody"]
    node = _resolve(body["content"]["application/json"]["schema"], schemas)
    for step in where.split("."):
        node = _resolve(node["items"] if step == "items" else node["properties"][step], schemas)
    return node


def test_body_rules_are_in_the_document(service: RunningService) -> None:
    with service.partner() as client:
        document = client.get("/schema/openapi.json").json()
    for (path, method, where), rules in RULES.items():
        found = documented_at(document, path, method, where)
        assert rules.items() <= found.items(), (path, where, found)
    page_token = next(p for p in document["paths"]["/partner/v1/orders"]["get"]["parameters"]
                      if p["name"] == "page_token")
    assert page_token["schema"]["oneOf"][0]["pattern"] == "^[^\\u0000]*$", page_token
    # msgspec renders the hand-decoded bodies: nothing of Litestar's `extra` form is left over.
    assert '"extra"' not in json.dumps(document)
    edit = documented_at(document, "/bundles/{bundle_id}", "patch", "name")
    assert {"type": "null"} not in edit.get("oneOf", []), edit  # leave it out, never null


def test_each_documented_rule_is_enforced(service: RunningService) -> None:
    with service.partner() as client:
        workspace = client.post(
            "/workspaces", json={"provider": "u", "credentials": {"api_key": "k1"}},
            headers={"Idempotency-Key": "rules-1"},
        ).json()["data"]["workspace_id"]
        bundle = {"monthly_sending_volume": 1000, "send_on_weekends": False}
        refused = {
            ("/bundles", "name"): {**bundle, "name": ""},
            ("/domains/generate", "keywords[0]"): {"keywords": ["two words"]},
            ("/pool/add", "domains[0]"): {"domains": [" "]},
            ("/swaps", "order_id"): {"order_id": "ord_\u0000", "domain": "a.com"},
            ("/domains/availability", "domains[1]"): {"domains": ["a.com", "b\u0000.com"]},
            ("/quotes", "destination.workspace_id"): {"destination": {"workspace_id": "wrk_\u0000"},
                                                      "suite_a": {"domains": 1,
                                                                  "inboxes_per_domain": 1}},
            ("/domains/forwarding", "forwarding_url"): {"domains": ["a.com"],
                                                        "forwarding_url": "http://"},
            ("/users", "first_name"): {"workspace_id": "wrk_" + "0" * 32, "email": "a@b.co",
                                       "first_name": "  ", "last_name": "Lee"},
            ("/users", "last_name"): {"workspace_id": "wrk_" + "0" * 32, "email": "a@b.co",
                                      "first_name": "Ann", "last_name": "L" * 201},
            ("/users", "email"): {"workspace_id": "wrk_" + "0" * 32, "email": "a@b",
                                  "first_name": "Ann", "last_name": "Lee"},
            ("/domains/generate", "prefixes[0]"): {"keywords": ["acme"], "prefixes": ["a b"]},
            ("/quotes", "forwarding_url"): {"destination": {"workspace_id": workspace},
                                            "suite_a": {"domains": 1, "inboxes_per_domain": 1},
                                            "forwarding_url": "https://?a=1"},
        }
        for (path, field), body in refused.items():
            error = client.post(path, json=body).json()["error"]
            assert (error["code"], error.get("field")) == ("invalid_request", field), (path, error)
        named = client.post("/bundles", json={**bundle, "na\u0000me": "x"}).json()["error"]
        assert named["field"] == "na\\u0000me"
        query = client.get("/domains", params={"domain": "a\u0000.com"}).json()["error"]
        assert (query["code"], query["field"]) == ("invalid_request", "domain")
        endpoint = service.put_webhook(client, "https://").json()["error"]
        assert endpoint["field"] == "url"
        created = client.post("/bundles", json={**bundle, "name": "B"}).json()["data"]
        edit = client.patch(f"/bundles/{created['id']}", json={"name": None}).json()["error"]
        assert (edit["code"], edit["field"]) == ("invalid_request", "name")


def test_links_lead_from_a_creation_to_its_reads(service: RunningService) -> None:
    """OpenAPI links name where each created id goes, and following one works."""
    with service.partner() as client:
        document = client.get("/schema/openapi.json").json()
        operations = {op["operationId"]: op for item in document["paths"].values()
                      for op in item.values() if isinstance(op, dict)}
        links = operations["createOrder"]["responses"]["201"]["links"]
        assert links["GetOrder"] == {"operationId": "getOrder",
                                     "parameters": {"order_id": "$response.body#/data/id"}}
        for operation in operations.values():
            for response in operation["responses"].values():
                for link in response.get("links", {}).values():
                    target = operations[link["operationId"]]
                    names = {p["name"] for p in target.get("parameters", [])}
                    assert set(link["parameters"]) <= names, link
        created = client.post("/bundles", json={"name": "B", "monthly_sending_volume": 1000,
                                                "send_on_weekends": False}).json()
        pointer = operations["createBundle"]["responses"]["201"]["links"]["GetBundle"]
        path = pointer["parameters"]["bundle_id"].split("#")[1].strip("/").split("/")
        bundle_id = created
        for step in path:
            bundle_id = bundle_id[step]
        assert client.get(f"/bundles/{bundle_id}").status_code == 200
