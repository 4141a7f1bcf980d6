"""Domain errors as gRPC statuses; the stable error code travels in the details and in the
trailing metadata (`error-code`, `error-field`), so callers branch on it as REST callers do."""

from __future__ import annotations

import json

import grpc

from domain.errors import DomainError
from gateway.rest.errors import STATUS_BY_CODE

ERROR_CODE_KEY = "error-code"
ERROR_FIELD_KEY = "error-field"
ERROR_DETAILS_KEY = "error-details"

GRPC_BY_HTTP = {
    400: grpc.StatusCode.INVALID_ARGUMENT,
    401: grpc.StatusCode.UNAUTHENTICATED,
    402: grpc.StatusCode.FAILED_PRECONDITION,
    403: grpc.StatusCode.PERMISSION_DENIED,
    404: grpc.StatusCode.NOT_FOUND,
    409: grpc.StatusCode.FAILED_PRECONDITION,
    422: grpc.StatusCode.INVALID_ARGUMENT,
    429: grpc.StatusCode.RESOURCE_EXHAUSTED,
    503: grpc.StatusCode.UNAVAILABLE,
}
# Retrying the same request cannot succeed for these conflicts, but a fresh one may.
GRPC_BY_CODE = {
    "idempotency_conflict": grpc.StatusCode.ABORTED,
    "idempotency_in_progress": grpc.StatusCode.ABORTED,
}


def status_of(code: str) -> grpc.StatusCode:
    if code in GRPC_BY_CODE:
        return GRPC_BY_CODE[code]
    return GRPC_BY_HTTP.get(STATUS_BY_CODE.get(code, 500), grpc.StatusCode.INTERNAL)


def trailers_of(error: DomainError) -> tuple[tuple[str, str], ...]:
    trailers = [(ERROR_CODE_KEY, error.code)]
    if error.field:
        trailers.append((ERROR_FIELD_KEY, error.field))
    if error.details:
        trailers.append((ERROR_DETAILS_KEY, json.dumps(error.details, default=str)))
    return tuple(trailers)


def details_of(error: DomainError) -> str:
    return f"{error.code}: {error.message}"


def error_from(rpc_error: grpc.RpcError) -> DomainError | None:
    """The domain error behind a failed call, on the client side (None if it carries none)."""
    trailers = dict(rpc_error.trailing_metadata() or ())
    code = trailers.get(ERROR_CODE_KEY)
    if not code:
        return None
    details = str(rpc_error.details() or "")
    message = details.removeprefix(f"{code}: ")
    extra = trailers.get(ERROR_DETAILS_KEY)
    return DomainError(
        str(code),
        message,
        field=trailers.get(ERROR_FIELD_KEY) or None,
        details=json.loads(extra) if extra else None,
    )
