"""One interceptor for every internal service: the caller's credentials, then error mapping.

Health and reflection stay open, as probes and `buf curl --list-services` expect, and so does
AdminService.GetDeployment (the CLI asks it before acting on a store of its own, whatever token
it holds). Every other method needs metadata `authorization: Bearer <operator token>` or, when
the server requires client certificates (mutual TLS), a certificate the configured client CA
signed.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from domain.errors import DomainError
from gateway.grpc.errors import ERROR_CODE_KEY, details_of, status_of, trailers_of
from gateway.rest.unavailable import StorageUnavailable
from infra.storage_health import storage_full

log = logging.getLogger(__name__)

OPEN_SERVICES = (
    "/grpc.health.v1.Health/",
    "/grpc.reflection.",
    "/partnerapi.v2.AdminService/GetDeployment",
)
OPERATOR_KEY = "x-operator"


def metadata_value(metadata: Any, key: str) -> str | None:
    for item in metadata or ():
        if item[0].lower() == key:
            return str(item[1])
    return None


def certificate_name(context: Any) -> str | None:
    """The common name of the client certificate the TLS handshake verified, if any."""
    auth = context.auth_context() or {}
    names = auth.get("x509_common_name") or auth.get("x509_subject_alternative_name") or ()
    return names[0].decode() if names else None


def operator_of(context: Any) -> str:
    """Who is acting, recorded on the events an operator causes: `x-operator` metadata, else
    the client certificate's common name."""
    name = metadata_value(context.invocation_metadata(), OPERATOR_KEY) or certificate_name(context)
    return (name or "operator").strip()[:200] or "operator"


async def _fail(context: Any, error: DomainError) -> None:
    await context.abort(status_of(error.code), details_of(error), trailing_metadata=trailers_of(error))


async def _fail_unexpected(context: Any, method: str, error: Exception) -> None:
    if storage_full(error):  # UNAVAILABLE with `service_unavailable`, as REST answers 503
        log.warning("gRPC %s: storage full (%s)", method, error)
        await _fail(context, StorageUnavailable())
    log.exception("gRPC %s failed", method)
    await context.abort(
        grpc.StatusCode.INTERNAL,
        "internal_error: Something went wrong on our side.",
        trailing_metadata=((ERROR_CODE_KEY, "internal_error"),),
    )


UNAUTHORIZED = DomainError("unauthorized", "Missing or invalid operator token.")


class OperatorInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    def __init__(self, token: str, *, trust_client_certificates: bool = False) -> None:
        self._expected = f"Bearer {token}".encode()
        # Only set when the handshake itself requires and verifies client certificates.
        self._trust_certificates = trust_client_certificates

    def _authorized(self, metadata: Any) -> bool:
        presented = metadata_value(metadata, "authorization") or ""
        return hmac.compare_digest(presented.encode(), self._expected)

    async def intercept_service(
        self, continuation: Callable[[Any], Awaitable[Any]], details: Any
    ) -> Any:
        handler = await continuation(details)
        if handler is None or details.method.startswith(OPEN_SERVICES):
            return handler
        by_token = self._authorized(details.invocation_metadata)
        trust = self._trust_certificates

        def authorized(context: Any) -> bool:
            return by_token or (trust and certificate_name(context) is not None)

        method = details.method
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                _guard_unary(handler.unary_unary, authorized, method),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                _guard_stream(handler.unary_stream, authorized, method),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler  # client streaming is not offered by any internal service


Check = Callable[[Any], bool]


def _guard_unary(inner: Any, authorized: Check, method: str) -> Any:
    async def behavior(request: Any, context: Any) -> Any:
        if not authorized(context):
            await _fail(context, UNAUTHORIZED)
        try:
            return await inner(request, context)
        except grpc.aio.AbortError:
            raise
        except DomainError as error:
            await _fail(context, error)
        except Exception as error:
            await _fail_unexpected(context, method, error)

    return behavior


def _guard_stream(inner: Any, authorized: Check, method: str) -> Any:
    async def behavior(request: Any, context: Any) -> AsyncIterator[Any]:
        if not authorized(context):
            await _fail(context, UNAUTHORIZED)
        try:
            async for item in inner(request, context):
                yield item
        except grpc.aio.AbortError:
            raise
        except DomainError as error:
            await _fail(context, error)
        except Exception as error:
            await _fail_unexpected(context, method, error)

    return behavior
