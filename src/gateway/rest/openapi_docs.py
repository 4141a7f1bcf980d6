"""What every partner operation shares, written into the served OpenAPI document.

Litestar documents each handler's success response and its own 400 shape. Our errors all leave
through one handler as the spec-7 envelope, and every response carries `Service-Request-Id` from
the outermost layer, so both are added here once rather than on each handler. So are the parts
Litestar cannot see: bodies decoded by hand (for the full `field` path) and `Idempotency-Key`.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request
from litestar.openapi.plugins import JsonRenderPlugin, SwaggerRenderPlugin

from gateway.rest.errors import STATUS_BY_CODE
from gateway.rest.openapi_links import add_links
from gateway.rest.openapi_names import (
    REF_PREFIX,
    collapse_single_choices,
    drop_unreached,
    merge_components,
    name_request_bodies,
    ref_name,
    split_nullable_enums,
)
from gateway.rest.openapi_webhooks import ENVELOPE as WEBHOOK_ENVELOPE
from gateway.rest.openapi_webhooks import webhooks_section
from services.domains.commands import PurchaseDomains
from services.orders.commands import PlaceOrder

ENVELOPE_NAME = "ErrorEnvelope"
ENVELOPE_REF = {"$ref": f"#/components/schemas/{ENVELOPE_NAME}"}

ERROR_ENVELOPE: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "request_id"],
            "properties": {
                "code": {
                    "type": "string",
                    "enum": sorted(STATUS_BY_CODE),
                    "description": "Stable error code (spec 7); clients branch on it. Each code "
                    "and its HTTP status: "
                    + ", ".join(f"`{code}` {status}" for code, status in STATUS_BY_CODE.items())
                    + ".",
                },
                "message": {"type": "string"},
                "request_id": {"type": "string", "description": "Equals Service-Request-Id."},
                "field": {
                    "type": "string",
                    "description": "Dot path of the input at fault, when one is (spec 7: "
                    "`credentials.api_key`); a list item by its index, `domains[0].domain`; a "
                    "header by its name, `Idempotency-Key`.",
                },
                "details": {
                    "type": "object",
                    "description": "More about the error, by code. `rate_limited`: "
                    "`retry_after_seconds`, the same value as the Retry-After header.",
                    "properties": {"retry_after_seconds": {"type": "integer", "minimum": 1}},
                },
            },
        }
    },
}

REQUEST_ID_HEADER: dict[str, Any] = {
    "description": "Unique id of this request; quote it when reporting a problem.",
    "required": True,
    "schema": {"type": "string"},
}
# On every answer to an authenticated request (a refused key spends nothing, so has none).
RATE_LIMIT_HEADERS: dict[str, dict[str, Any]] = {
    f"RateLimit-{name}": {
        "description": text,
        "required": False,
        "schema": {"type": "integer", "minimum": 0},
    }
    for name, text in (
        ("Limit", "Burst size of the organization's allowance for this environment."),
        ("Remaining", "Requests left in the allowance now."),
        ("Reset", "Seconds until the allowance is full again."),
    )
}
RETRY_AFTER_HEADER: dict[str, Any] = {
    "description": "Seconds until the rate limit allows another request.",
    "required": True,
    "schema": {"type": "integer", "minimum": 1},  # spec 7: integer seconds, at least 1
}

REPLAYED_HEADER: dict[str, Any] = {
    "description": "`true` when this answers again the first request sent with the same "
    "Idempotency-Key and body (spec 8); absent on a first answer.",
    "required": False,
    "schema": {"type": "string", "enum": ["true"]},
}

COMMON_ERRORS = {
    "400": "invalid_request (with `field`) or another input error",
    "401": "unauthorized: missing, malformed or revoked key",
    "429": "rate_limited",
    "500": "internal_error: retry with backoff and keep the request id",
    "503": "service_unavailable: the service cannot store right now (its disk is full); "
    "nothing was written, retry after Retry-After",
}
WRITE_ERRORS = {
    "403": "forbidden: the key's permission preset does not allow this",
    "409": "the current state refuses this (see the code)",
    "413": "payload_too_large",
}
WRITE_METHODS = {"post", "put", "patch", "delete"}
OTHER_ERRORS = "Any other error, in the same envelope (codes and statuses in spec 7)."

# Limits of spec 4.1 and 8 that the body structs enforce in code, not in their schema.
PER_PAGE_BOUNDS = {"minimum": 1, "maximum": 100}
DOMAIN_LIST_LIMITS: dict[str, dict[str, Any]] = {
    "removePoolDomains": {"minItems": 1, "maxItems": 25, "uniqueItems": True},
    "checkDomainAvailability": {"minItems": 1, "maxItems": 50},
    "purchaseDomains": {"minItems": 1, "maxItems": 50},
}

HAND_DECODED_BODIES: dict[str, type[msgspec.Struct]] = {
    "createOrder": PlaceOrder,
    "createQuote": PlaceOrder,
    "purchaseDomains": PurchaseDomains,
}
# operationId -> whether the header is required (else honoured when sent).
IDEMPOTENCY_KEY: dict[str, bool] = {
    "createOrder": True,
    "createWorkspace": True,
    "purchaseDomains": True,
    "createSwap": False,  # optional since the swaps audit: spec 8 requires it on three POSTs only
    "createBundle": False,
    "createUser": False,
    "attachPoolDomains": False,
    "renameSwapUserNames": False,
    "importDomains": False,
    "submitImportJob": False,
    "setDomainForwarding": False,
    "releasePoolDomains": False,
    "advanceSandboxClock": False,
    "redeliverEvents": False,
    "cancelOrder": False,
    "resolvePendingAction": False,
    "setWebhookEndpoint": False,
    "rotateWebhookSecret": False,
    "redeliverEvent": False,
    "sendTestEvent": False,
    "addPoolDomains": False,
    "removePoolDomains": False,
    "archiveBundle": False,
    "updateBundle": False,
    "updateDomain": False,
    "updateWorkspace": False,
}


def _idempotency_parameter(required: bool) -> dict[str, Any]:
    description = "A retry with the same key and body within 24 h answers the first response."
    schema: dict[str, Any] = {"type": "string", "maxLength": 255}
    if required:
        schema["minLength"] = 1
    else:
        description += " An empty value counts as not sent."
    return {
        "name": "Idempotency-Key",
        "in": "header",
        "required": required,
        "description": description,
        "schema": schema,
    }


def _document_request(operation: dict[str, Any], schemas: dict[str, Any]) -> None:
    operation_id = operation.get("operationId", "")
    body = HAND_DECODED_BODIES.get(operation_id)
    if body is not None and "requestBody" not in operation:
        (ref,), components = msgspec.json.schema_components(
            [body], ref_template=REF_PREFIX + "{name}"
        )
        lift_extra(components)
        top = ref_name(ref)
        renamed = merge_components(schemas, components, top)
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": REF_PREFIX + renamed[top]}}},
        }
    for parameter in operation.get("parameters", []):
        if parameter.get("in") == "query" and parameter.get("name") == "per_page":
            parameter["schema"] = _bounded_per_page(parameter.get("schema", {}))
    if operation_id in DOMAIN_LIST_LIMITS:
        _limit_domains(operation, schemas, DOMAIN_LIST_LIMITS[operation_id])
    if operation_id in IDEMPOTENCY_KEY:
        parameters: list[dict[str, Any]] = operation.setdefault("parameters", [])
        if all(p.get("name", "").lower() != "idempotency-key" for p in parameters):
            parameters.append(_idempotency_parameter(IDEMPOTENCY_KEY[operation_id]))


def lift_extra(node: Any) -> None:
    """msgspec renders `Meta(extra_json_schema={"extra": {...}})` (written for Litestar, see
    `schema_notes.documented`) as an `extra` member: make it the JSON Schema keywords it names."""
    if isinstance(node, list):
        for item in node:
            lift_extra(item)
    if not isinstance(node, dict):
        return
    for key, value in node.pop("extra", {}).items():
        head, *rest = key.split("_")
        node[head + "".join(part.capitalize() for part in rest)] = value
    for value in node.values():
        lift_extra(value)


def _bounded_per_page(schema: dict[str, Any]) -> dict[str, Any]:
    """The integer branch gets 1..100 and the whole the default 25; `null` stays accepted (the
    handler reads it as absent)."""
    branches = schema.get("oneOf", [schema])
    bounded = [{**b, **PER_PAGE_BOUNDS} if b.get("type") == "integer" else b for b in branches]
    shaped = {"oneOf": bounded} if "oneOf" in schema else bounded[0]
    return {**shaped, "default": 25}


def _limit_domains(
    operation: dict[str, Any], schemas: dict[str, Any], limits: dict[str, Any]
) -> None:
    """An inline copy of the body schema with the `domains` bounds: pool add shares the struct."""
    content = operation["requestBody"]["content"]["application/json"]
    ref = content["schema"].get("$ref", "")
    body = dict(schemas.get(ref.rsplit("/", 1)[-1], content["schema"]))
    properties = dict(body.get("properties", {}))
    properties["domains"] = {**properties.get("domains", {}), **limits}
    content["schema"] = {**body, "properties": properties}


# `text_rules.refuse_nul_characters`: no NUL in any path, query or body text.
NO_NUL = "^[^\\u0000]*$"


def _shape_inputs(schema: dict[str, Any], schemas: dict[str, Any]) -> None:
    """Every body struct forbids unknown properties (decisions.md 4), and no text takes a NUL:
    say so in the schemas a request body or a parameter reaches (none of them is used by
    a response). A string that has a pattern of its own keeps it."""
    seen: set[str] = set()
    operations = [
        op
        for item in schema.get("paths", {}).values()
        for op in item.values()
        if isinstance(op, dict)
    ]
    todo: list[Any] = [op["requestBody"] for op in operations if "requestBody" in op]
    todo += [
        p.get("schema")
        for op in operations
        for p in op.get("parameters", [])
        if p.get("in") in ("query", "path")
    ]
    while todo:
        node = todo.pop()
        if isinstance(node, list):
            todo.extend(node)
        elif isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node:
                node.setdefault("additionalProperties", False)
            if node.get("type") == "string" and "enum" not in node:
                node.setdefault("pattern", NO_NUL)
            name = str(node.get("$ref", "")).rsplit("/", 1)[-1]
            if name in schemas and name not in seen:
                seen.add(name)
                todo.append(schemas[name])
            todo.extend(v for k, v in node.items() if k != "$ref")


def _error_response(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "headers": {"Service-Request-Id": REQUEST_ID_HEADER},
        "content": {"application/json": {"schema": ENVELOPE_REF}},
    }


def _document_responses(path: str, method: str, operation: dict[str, Any]) -> None:
    responses: dict[str, Any] = operation.setdefault("responses", {})
    own: dict[str, str] = {}
    for status, response in list(responses.items()):
        if status.isdigit() and int(status) >= 400:
            own[status] = response.get("description", "")
            responses[status] = _error_response(own[status])
    errors = dict(COMMON_ERRORS)
    if method in WRITE_METHODS:
        errors.update(WRITE_ERRORS)
    if "{" in path:
        errors["404"] = "not_found: no such resource for this organization and environment"
    for status, description in errors.items():
        # What the operation says of its own codes comes first; the shared meaning follows.
        specific = own.get(status, "")
        if specific and specific != description:
            description = f"{specific}; {description}"
        responses[status] = _error_response(description)
    if operation.get("operationId") in IDEMPOTENCY_KEY:
        for status, response in responses.items():
            if status.startswith("2"):
                response.setdefault("headers", {})["Idempotent-Replayed"] = REPLAYED_HEADER
        responses["409"] = _error_response(
            f"{WRITE_ERRORS['409']}; idempotency_conflict: the key was used with another body; "
            "idempotency_in_progress: the first request with this key is still running"
        )
    responses["429"]["headers"]["Retry-After"] = RETRY_AFTER_HEADER
    responses["default"] = _error_response(OTHER_ERRORS)
    for response in responses.values():
        headers = response.setdefault("headers", {})
        headers["Service-Request-Id"] = REQUEST_ID_HEADER
        headers.update(RATE_LIMIT_HEADERS)


# Properties a handler requires but decodes as optional, so that the resource is looked up
# first (a foreign id is 404 whatever the body): required in the document all the same.
REQUIRED_AFTER_LOOKUP = {"UpdateDomainRequest": ("auto_renew",)}


def document_partner_api(schema: dict[str, Any], base_path: str) -> dict[str, Any]:
    """Adds the envelope and the shared headers, in place and once, to every partner operation,
    and names the schemas for client generators (`openapi_names`)."""
    schemas = schema.setdefault("components", {}).setdefault("schemas", {})
    if ENVELOPE_NAME in schemas:
        return schema
    for path, item in schema.get("paths", {}).items():
        if not path.startswith(base_path):
            continue
        for method, operation in item.items():
            if isinstance(operation, dict) and "responses" in operation:
                _document_request(operation, schemas)
                _document_responses(path, method, operation)
                add_links(operation)
    name_request_bodies(schema)
    for name, fields in REQUIRED_AFTER_LOOKUP.items():
        if name in schemas:
            schemas[name]["required"] = sorted({*schemas[name].get("required", []), *fields})
    collapse_single_choices(schema)
    split_nullable_enums(schema)
    _shape_inputs(schema, schemas)
    schemas["WebhookEvent"] = dict(WEBHOOK_ENVELOPE)  # copies: naming adds their titles
    schema["webhooks"] = webhooks_section()
    schemas[ENVELOPE_NAME] = dict(ERROR_ENVELOPE)
    drop_unreached(schema)
    return schema


class _PartnerDocument:
    """A render plugin showing the document with the shared parts added on first render (the
    build is cached), so the JSON and the interactive page show one document."""

    def __init__(self, base_path: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.base_path = base_path

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        partner = document_partner_api(openapi_schema, self.base_path)
        rendered: bytes = super().render(request, partner)  # type: ignore[misc]
        return rendered


class PartnerSwagger(_PartnerDocument, SwaggerRenderPlugin):
    """The interactive page."""


class PartnerOpenAPIJson(_PartnerDocument, JsonRenderPlugin):
    """`openapi.json`."""
