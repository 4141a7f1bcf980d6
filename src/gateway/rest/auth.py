"""Bearer authentication, the shared rate allowance, and write permissions by preset."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from litestar.connection import ASGIConnection
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from domain.errors import DomainError, RetryLater
from gateway.rest import metrics
from infra.blocking import run_blocking
from infra.clock import enter_scope, leave_scope
from services.accounts.keys import Authenticated, Principal
from services.sandbox.clock import sandbox_org

if TYPE_CHECKING:
    from runtime.container import Container

# Handlers declare the write permission they need in `opt`; non-GET handlers default to full.
WRITE_LIMITED = {"write": "limited"}
WRITE_FULL = {"write": "full"}
# What only a sandbox key has (its clock): a live key gets 404 whatever its preset or body.
SANDBOX_ONLY = {"sandbox_only": True}
PUBLIC_PATHS = (
    "/healthz",
    "/readyz",
    "/metrics",
    "/partner/v1/schema",
    "/portal",
)


class AuthAndRateLimitMiddleware(ASGIMiddleware):
    exclude_path_pattern = tuple(f"^{path}" for path in PUBLIC_PATHS)

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        checked, headers = await authorize_off_loop(scope["app"].state["container"], scope)
        principal = checked.principal
        handler_opt = scope["route_handler"].opt
        if handler_opt.get("sandbox_only"):
            sandbox_org(principal)  # a live key: 404 before its preset or body is looked at
        # Checked here rather than in a Litestar guard: a sync guard is run in the thread pool,
        # a hand-off per request that cost more than the whole key check and rate limit.
        check_permission(str(scope.get("method", "GET")), handler_opt, principal.preset)
        scope["principal"] = principal  # type: ignore[typeddict-unknown-key]
        # Everything this request does reads its sandbox's clock (decisions.md 6).
        clock_scope = enter_scope(principal.org_id, principal.environment, checked.clock_version)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *headers]
            await send(message)

        try:
            await next_app(scope, receive, send_with_headers)
        finally:
            leave_scope(clock_scope)


async def authorize_off_loop(
    container: Container, scope: Any
) -> tuple[Authenticated, list[tuple[bytes, bytes]]]:
    """`authorize`, in a worker thread where its key check and rate-limit spend are network
    round trips (PostgreSQL): run on the event loop, they held every other request behind them,
    and under load requests queued there longer than they took to answer. On SQLite both are
    microseconds, less than the hand-off to a thread."""
    if container.settings.database_url:
        return await run_blocking(authorize, container, scope)
    return authorize(container, scope)


def authorize(
    container: Container, scope: Any
) -> tuple[Authenticated, list[tuple[bytes, bytes]]]:
    """The checked key and the RateLimit headers, after spending one token of its
    organization's allowance; 401 before any spending, 429 when the allowance is used up."""
    checked = authenticate_scope(container, scope)
    principal = checked.principal
    bucket = f"{principal.org_id}:{principal.environment}"
    rate = principal.rate_rps or container.settings.default_rate_rps
    burst = principal.rate_burst or container.settings.default_rate_burst
    decision = container.rate_limiter.spend(bucket, rate, burst)
    if not decision.recorded:
        metrics.RATE_UNRECORDED.inc()
    headers = [
        (b"ratelimit-limit", b"%d" % decision.limit),
        (b"ratelimit-remaining", b"%d" % decision.remaining),
        (b"ratelimit-reset", b"%d" % decision.reset_seconds),
    ]
    if not decision.allowed:
        metrics.RATE_LIMITED.inc()
        raise RateLimited(decision.retry_after_seconds, headers)
    return checked, headers


class RateLimited(RetryLater):
    def __init__(self, retry_after: int, headers: list[tuple[bytes, bytes]]) -> None:
        super().__init__(
            "rate_limited",
            "Rate limit exceeded; retry after the number of seconds in Retry-After.",
            retry_after,
            details={"retry_after_seconds": retry_after},
        )
        self.headers = {**{k.decode(): v.decode() for k, v in headers}, **self.headers}


class Unauthorized(DomainError):
    """401, with the challenge RFC 6750 3 requires: the scheme to use, and why when a key was
    sent and refused."""

    def __init__(self, message: str, key_sent: bool) -> None:
        super().__init__("unauthorized", message)
        challenge = 'Bearer realm="partner-api"'
        if key_sent:
            challenge += ', error="invalid_token"'
        self.headers = {"WWW-Authenticate": challenge}


def authenticate_scope(container: Container, scope: Any) -> Authenticated:
    header = b""
    for name, value in scope["headers"]:
        if name == b"authorization":
            header = value
            break
    scheme, _, token = header.decode("latin-1").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        # RFC 6750 3.1: no error code when the request sent no Bearer token at all.
        raise Unauthorized(
            "Send a valid API key as 'Authorization: Bearer <key>'.",
            key_sent=scheme.lower() == "bearer",
        )
    checked = container.accounts.check(token.strip())
    if checked is None:
        raise Unauthorized("The API key is missing, malformed or revoked.", key_sent=True)
    return checked


def principal_of(connection: ASGIConnection[Any, Any, Any, Any]) -> Principal:
    principal: Principal = connection.scope["principal"]  # type: ignore[typeddict-item]
    return principal


def check_permission(method: str, handler_opt: dict[str, Any], preset: str) -> None:
    """Reads are open to every preset; writes need the preset the handler declares in `opt`."""
    if method in ("GET", "HEAD", "OPTIONS"):
        return
    needed = handler_opt.get("write", "full")
    if preset == "full" or (needed == "limited" and preset == "limited"):
        return
    raise DomainError("forbidden", f"This API key's '{preset}' preset does not allow this action.")
