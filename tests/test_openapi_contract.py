"""The OpenAPI document as a contract clients are generated from: one name per shape, request
bodies named for their operation, an `enum` on every closed vocabulary, no made-up examples,
every operation described and tagged, `info` complete, valid OpenAPI 3.1; and the file
`make lint` checks is the document the service serves."""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from typing import Any, get_args

import httpx
from conftest import PATIENCE, RunningService
from openapi_spec_validator import validate

from domain import api_keys, bundles, domains, orders, pending_actions, swaps, workspaces
from gateway.rest.imports import JOB_STATUSES
from gateway.rest.orders import STATUSES as ORDER_STATUSES
from runtime.openapi_export import partner_document
from schema import vocabulary
from schema.event_types import EVENT_TYPES


@cache
def document() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(partner_document())
    return loaded


def operations() -> list[dict[str, Any]]:
    return [
        operation
        for item in document()["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict) and "responses" in operation
    ]


def test_the_served_document_is_the_one_make_lint_checks(service: RunningService) -> None:
    served = httpx.get(f"{service.api}/schema/openapi.json", timeout=PATIENCE).json()
    assert served == document()
    validate(served)  # openapi-spec-validator, as `make lint` runs it


def test_each_shape_has_one_name_and_each_body_its_operation_name() -> None:
    schemas = document()["components"]["schemas"]
    titles = Counter(schema.get("title") for schema in schemas.values())
    assert [title for title, seen in titles.items() if seen > 1] == []
    assert all(schema["title"] == name for name, schema in schemas.items())
    assert not [name for name in schemas if "." in name or name.endswith("Body")]
    for operation in operations():
        body = operation.get("requestBody")
        if body is None:
            continue
        schema = body["content"]["application/json"]["schema"]
        ref = schema.get("$ref") or next(c["$ref"] for c in schema["oneOf"] if "$ref" in c)
        operation_id = operation["operationId"]
        assert ref == f"#/components/schemas/{operation_id[0].upper()}{operation_id[1:]}Request"
    assert {"CreateOrderRequest", "CreateQuoteRequest", "PurchaseDomainsRequest"} <= set(schemas)


def test_no_generated_examples_anywhere() -> None:
    """Litestar's examples were random strings (an order `status` of `PwugAAGU...`)."""
    text = json.dumps(document())
    assert '"examples"' not in text and '"example"' not in text


def test_every_operation_is_described_and_tagged_and_info_is_complete() -> None:
    declared = {tag["name"] for tag in document()["tags"]}
    webhooks = [item["post"] for item in document()["webhooks"].values()]
    for operation in operations() + webhooks:
        assert operation.get("summary") and operation.get("description"), operation["operationId"]
        assert operation.get("tags") and set(operation["tags"]) <= declared, operation["tags"]
    info = document()["info"]
    assert info["description"] and info["contact"]["name"] and info["license"]["name"]


def enum_of(schema_name: str, field: str) -> list[Any]:
    node = document()["components"]["schemas"][schema_name]["properties"][field]
    for choice in node.get("oneOf", [node]):
        if "enum" in choice:
            return list(choice["enum"])
        if "const" in choice:  # a vocabulary of one word so far
            return [choice["const"]]
    raise AssertionError(f"{schema_name}.{field} has no enum: {node}")


def test_closed_vocabularies_are_enums_equal_to_the_domain_lists() -> None:
    same = {
        vocabulary.Environment: api_keys.ENVIRONMENTS,
        vocabulary.Preset: api_keys.PRESETS,
        vocabulary.Suite: domains.SUITES,
        vocabulary.Provider: workspaces.PROVIDERS,
        vocabulary.OrderStatus: ORDER_STATUSES,
        vocabulary.DomainStatus: domains.STATUSES,
        vocabulary.ActionStatus: pending_actions.ACTION_STATUSES,
        vocabulary.ImportJobStatus: JOB_STATUSES,
        vocabulary.SwapType: swaps.KINDS,
        vocabulary.SwapStatus: swaps.STATUSES,
        vocabulary.BundleStatus: bundles.STATUSES,
    }
    for literal, values in same.items():
        assert set(get_args(literal)) == set(values), (literal, values)
    documented = {
        ("OrderOut", "status"): ORDER_STATUSES,
        ("OrderOut", "type"): ("order", "purchase"),
        ("OrderOut", "environment"): api_keys.ENVIRONMENTS,
        ("OrderDomain", "status"): domains.STATUSES,
        ("PendingActionOut", "status"): pending_actions.ACTION_STATUSES,
        ("EventOut", "type"): EVENT_TYPES,
        ("ApiKeyInfo", "permission_preset"): api_keys.PRESETS,
        ("WorkspaceOut", "provider"): workspaces.PROVIDERS,
        ("ImportJobOut", "status"): JOB_STATUSES,
        ("SwapOut", "type"): swaps.KINDS,
        ("SwapOut", "status"): swaps.STATUSES,
        ("BundleOut", "status"): bundles.STATUSES,
        ("Inbox", "suite"): domains.SUITES,
        ("CreateWorkspaceRequest", "provider"): workspaces.PROVIDERS,
        ("OrderDomain", "source"): orders.ITEM_SOURCES,
        ("Inbox", "status"): ("active",),
        ("SwapInbox", "status"): ("active",),
        ("SwapOut", "new_domain_source"): ("inventory", "purchase", "generated"),
        ("SwapOut", "old_domain_status"): ("attached", "warm", "detached"),
        ("DomainOut", "suite"): domains.SUITES,
        ("DomainOut", "provider"): domains.SUITES,
    }
    for (schema_name, field), values in documented.items():
        assert set(enum_of(schema_name, field)) == set(values), (schema_name, field)
    assert None not in enum_of("Destination", "provider")  # null is its own choice
    error = document()["components"]["schemas"]["ErrorEnvelope"]["properties"]["error"]
    assert "not_found" in error["properties"]["code"]["enum"]


def test_an_enum_beside_a_null_choice_admits_the_null() -> None:
    """`PATCH /workspaces/{id}` takes `"provider": null`: an enum on the whole union that left
    null out would have a validating client refuse what the service accepts."""
    for schema_name, schema in document()["components"]["schemas"].items():
        for field, node in schema.get("properties", {}).items():
            nullable = any(choice.get("type") == "null" for choice in node.get("oneOf", []))
            if nullable and "enum" in node:
                assert None in node["enum"], (schema_name, field)
    assert set(document()["components"]["schemas"]["UpdateWorkspaceRequest"]["properties"][
        "provider"]["enum"]) == {*workspaces.PROVIDERS, None}
