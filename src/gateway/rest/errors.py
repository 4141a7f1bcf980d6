"""The error envelope of spec 7, produced in exactly one place for every error."""

from __future__ import annotations

import logging
import re
from typing import Any

import msgspec
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException

from domain.errors import DomainError
from gateway.rest.unavailable import unavailable_if_storage_full

log = logging.getLogger(__name__)

STATUS_BY_CODE: dict[str, int] = {
    **dict.fromkeys(
        [
            "invalid_request",
            "idempotency_key_required",
            "order_shape_conflict",
            "domain_count_mismatch",
            "provider_not_supported",
            "sequencer_super_admin_key",
            "sequencer_client_id_required",
            "provider_login_credentials_required",
            "premium_domain_not_supported",
            "domain_not_usable_for_provider",
        ],
        400,
    ),
    "unauthorized": 401,
    "insufficient_funds": 402,
    "forbidden": 403,
    "not_found": 404,
    "sequencer_client_not_found": 404,
    "method_not_allowed": 405,
    **dict.fromkeys(
        [
            "idempotency_conflict",
            "idempotency_in_progress",
            "provider_mismatch",
            "workspace_promotion_required",
            "workspace_credentials_conflict",
            "sequencer_connection_required",
            "insufficient_inventory",
            "domain_not_imported",
            "domains_not_submittable",
            "domain_already_in_active_order",
            "pool_domains_linked",
            "pool_state_conflict",
            "conflict",
            "order_state_conflict",
        ],
        409,
    ),
    "bundle_archived": 409,
    "domain_not_renewable": 409,
    "payload_too_large": 413,
    # Answered by the HTTP server itself (runtime/http_edge.py), before the application runs.
    "request_timeout": 408,
    "uri_too_long": 414,
    "request_headers_too_large": 431,
    "server_busy": 503,
    "provider_credentials_invalid": 422,
    "rate_limited": 429,
    "internal_error": 500,
    "provider_unavailable": 503,
    "service_unavailable": 503,
}

CODE_BY_STATUS = {
    400: "invalid_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    429: "rate_limited",
    503: "provider_unavailable",
}


def request_id_of(request: Request[Any, Any, Any]) -> str:
    return str(request.scope.get("request_id", ""))


def envelope(
    request_id: str,
    code: str,
    message: str,
    field: str | None = None,
    details: dict[str, Any] | None = None,
) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message, "request_id": request_id}
    if field is not None:
        error["field"] = field
    if details is not None:
        error["details"] = details
    return {"error": error}


def error_response(
    request: Request[Any, Any, Any],
    error: DomainError,
    headers: dict[str, str] | None = None,
) -> Response[Any]:
    status = STATUS_BY_CODE.get(error.code, 400)
    body = envelope(request_id_of(request), error.code, error.message, error.field, error.details)
    return Response(body, status_code=status, headers=headers or getattr(error, "headers", None))


async def send_raw_error(send: Any, request_id: str, error: Exception, where: str) -> None:
    """The response `handle_exception` gives, byte for byte, for routes served as raw ASGI."""
    error = unavailable_if_storage_full(error)
    if isinstance(error, DomainError):
        status = STATUS_BY_CODE.get(error.code, 400)
        body = envelope(request_id, error.code, error.message, error.field, error.details)
        extra = getattr(error, "headers", None) or {}
    else:
        log.exception("unhandled error on %s", where)
        status, extra = 500, {}
        body = envelope(
            request_id,
            "internal_error",
            "Something went wrong on our side; retry with backoff and keep the request id.",
        )
    encoded = msgspec.json.encode(body)
    headers = [
        (name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in extra.items()
    ]
    headers += [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(encoded))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": encoded, "more_body": False})


_MSGSPEC_PATH = re.compile(r" - at `\$(?P<path>[^`]*)`$")
# The name may be empty: `{"": 1}` names the property "" (its dot path ends in the dot).
_FIELD_NAME = re.compile(r"field `(?P<name>[^`]*)`")


def field_from_msgspec(message: str) -> str | None:
    """`Object contains unknown field `x` - at `$.a.b[0]`` -> `a.b[0].x`."""
    match = _MSGSPEC_PATH.search(message)
    path = match.group("path").lstrip(".") if match else ""
    named = _FIELD_NAME.search(message)
    if named and ("unknown field" in message or "missing required field" in message):
        return f"{path}.{named.group('name')}" if path else named.group("name")
    return path or None


def clean_msgspec_message(message: str) -> str:
    return _MSGSPEC_PATH.sub("", message).replace("`", "'")


def body_field(key: str | None, message: str) -> str | None:
    """Litestar names the failing body path in `key` ("data" for the root, "credentials",
    "items[0].api_key"); unknown and missing properties name themselves in the message."""
    path = "" if key in (None, "", "data") else str(key)
    named = _FIELD_NAME.search(message)
    if named and ("unknown field" in message or "missing required field" in message):
        return f"{path}.{named.group('name')}" if path else named.group("name")
    return path or field_from_msgspec(message)


def _validation_error(request: Request[Any, Any, Any], exc: ValidationException) -> Response[Any]:
    extra = exc.extra if isinstance(exc.extra, list) else []
    first = extra[0] if extra and isinstance(extra[0], dict) else {}
    message = str(first.get("message") or exc.detail or "Invalid request.")
    key = first.get("key")
    source = first.get("source")
    if source == "body" and key == "data" and message == "'data'":
        # Litestar's wording for a request that has no body at all.
        message = "A JSON request body is required."
    if source in ("query", "path", "header", "cookie") and key:
        field: str | None = str(key)
    elif source == "body":
        field = body_field(key, message)
    else:
        field = field_from_msgspec(message)
    return error_response(
        request, DomainError("invalid_request", clean_msgspec_message(message), field=field)
    )


def handle_exception(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    exc = unavailable_if_storage_full(exc, request.app.state.get("container"))
    if isinstance(exc, DomainError):
        return error_response(request, _with_path_field(request, exc))
    if isinstance(exc, ValidationException):
        return _validation_error(request, exc)
    if isinstance(exc, HTTPException) and exc.status_code in (404, 405):
        # Spec 5: every request carries a valid key, or gets 401; the route is looked up
        # first, so without this an unknown path or method answered the caller without a key.
        refused = _key_refusal(request)
        if refused is not None:
            return error_response(request, refused)
    if isinstance(exc, HTTPException):
        code = CODE_BY_STATUS.get(exc.status_code, "invalid_request")
        if exc.status_code >= 500:
            code = "internal_error"
        status = exc.status_code if exc.status_code in CODE_BY_STATUS else 400
        message = exc.detail if isinstance(exc.detail, str) and exc.detail else code
        body = envelope(request_id_of(request), code, message)
        return Response(body, status_code=status, headers=exc.headers or None)
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    body = envelope(
        request_id_of(request),
        "internal_error",
        "Something went wrong on our side; retry with backoff and keep the request id.",
    )
    return Response(body, status_code=500)


PARTNER_PATH = "/partner/v1/"


def _with_path_field(request: Request[Any, Any, Any], error: DomainError) -> DomainError:
    """A 404 names the path parameter that found nothing (`GET /orders/{order_id}`: field
    `order_id`) when the route has one and the error names no other."""
    if error.code != "not_found" or error.field is not None:
        return error
    names = list(request.path_params)
    if len(names) == 1:
        error.field = names[0]
    return error


def _key_refusal(request: Request[Any, Any, Any]) -> DomainError | None:
    """Why a request to the partner API has no valid key (public paths, such as the schema,
    need none), or None. A missing or malformed key is refused without a lookup; a store that
    cannot be asked leaves the 404/405 as it was."""
    from gateway.rest.auth import PUBLIC_PATHS, authenticate_scope

    path = request.url.path
    if not path.startswith(PARTNER_PATH) or path.startswith(PUBLIC_PATHS):
        return None
    try:
        authenticate_scope(request.app.state["container"], request.scope)
    except DomainError as refused:
        return refused
    except Exception:  # noqa: BLE001 - the store is down: answer the routing error
        log.warning("key check for %s %s failed", request.method, path, exc_info=True)
    return None
