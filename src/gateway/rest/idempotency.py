"""Idempotency-Key handling for the POSTs that create billable or durable resources."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from litestar import Request, Response

from domain.errors import DomainError
from gateway.rest.auth import principal_of
from gateway.rest.lists import container_of
from gateway.rest.strict_bodies import request_rules
from infra.blocking import run_blocking
from infra.idempotency import Claim, fingerprint

MAX_KEY_LENGTH = 255


def require_idempotency_key(request: Request[Any, Any, Any]) -> str:
    """The key, checked before the body is decoded: spec 8 says a missing key gives
    `idempotency_key_required`, whatever else the request gets wrong."""
    key = (request.headers.get("idempotency-key") or "").strip()
    if not key:
        raise DomainError(
            "idempotency_key_required",
            "This request needs an Idempotency-Key header.",
            field="Idempotency-Key",
        )
    return key


async def idempotency_key_first(request: Request[Any, Any, Any]) -> None:
    """`before_request` hook for handlers whose body Litestar decodes before the handler runs:
    the key first, then the rules every body follows."""
    require_idempotency_key(request)
    await request_rules(request)


# A stored answer that carries a secret is kept sealed (docs/security.md: no secret at rest in
# clear); a JSON answer never starts with this.
_SEALED = b"sealed:"


async def idempotent(
    request: Request[Any, Any, Any],
    run: Callable[[], Any],
    status_code: int = 201,
    sealed: bool = False,
) -> Response[Any]:
    """Run `run` (a blocking function returning a JSON-able value) once per key.

    The same key with the same body answers the first response again; with another body,
    409 idempotency_conflict; while the first is still running, 409 idempotency_in_progress.
    Only successes are remembered, so a failed attempt may be retried with the same key.
    """
    key = require_idempotency_key(request)
    if len(key) > MAX_KEY_LENGTH:
        raise DomainError(
            "invalid_request", "Idempotency-Key is at most 255 characters.", field="Idempotency-Key"
        )
    container = container_of(request)
    store = container.idempotency
    scope = principal_of(request).tenant
    body = await request.body()
    claimed = fingerprint(request.method, request.url.path, body)

    def once() -> tuple[Any, bytes | None]:
        # The claim, the work and its record in one worker thread: no store round trip blocks
        # the event loop, and a client gone mid-request still leaves the outcome recorded.
        stored = store.begin(scope, key, claimed)
        if not isinstance(stored, Claim):
            return stored, None
        token = stored.enter()
        try:
            encoded = msgspec.json.encode(run())
        except BaseException:
            store.release(stored)
            raise
        finally:
            Claim.leave(token)
        kept = container.sealer.seal(encoded.decode()).encode() if sealed else encoded
        store.finish(stored, status_code, kept)
        return None, encoded

    stored, encoded = await run_blocking(once)
    if encoded is None:
        replayed = stored.body
        if replayed.startswith(_SEALED):
            replayed = str(container.sealer.unseal(replayed.decode())).encode()
        return Response(
            replayed,
            status_code=stored.status,
            media_type="application/json",
            headers={"Idempotent-Replayed": "true"},
        )
    return Response(encoded, status_code=status_code, media_type="application/json")


async def maybe_idempotent(
    request: Request[Any, Any, Any],
    run: Callable[[], Any],
    status_code: int = 201,
    sealed: bool = False,
) -> Response[Any]:
    """Idempotency-Key is optional on this POST: honoured when sent."""
    if request.headers.get("idempotency-key"):
        return await idempotent(request, run, status_code=status_code, sealed=sealed)
    result = await run_blocking(run)
    return Response(
        msgspec.json.encode(result), status_code=status_code, media_type="application/json"
    )
