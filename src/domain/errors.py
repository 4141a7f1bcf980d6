"""Domain errors carry the stable error codes of spec section 7; the gateway maps them to HTTP."""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    def __init__(
        self,
        code: str,
        message: str,
        *,
        field: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field
        self.details = details


class NotFound(DomainError):
    def __init__(self, what: str = "resource", *, field: str | None = None) -> None:
        super().__init__("not_found", f"No such {what}.", field=field)


class RetryLater(DomainError):
    """A refusal the same request may not meet if sent again later: `Retry-After` says when
    (the error handler sends an error's `headers`)."""

    def __init__(
        self, code: str, message: str, seconds: int, *, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(code, message, details=details)
        self.headers = {"Retry-After": str(seconds)}


class ProviderUnavailable(RetryLater):
    """An outside provider did not answer: 503, with `Retry-After` as a 429 has."""

    RETRY_AFTER_SECONDS = 5

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__("provider_unavailable", message, self.RETRY_AFTER_SECONDS, details=details)


class StillInProgress(RetryLater):
    """409 `idempotency_in_progress`: the first request with this key is still running (or its
    process died and its lease runs out)."""

    RETRY_AFTER_SECONDS = 1

    def __init__(self, message: str) -> None:
        seconds = self.RETRY_AFTER_SECONDS
        super().__init__("idempotency_in_progress", message, seconds,
                         details={"retry_after_seconds": seconds})


def invalid(message: str, field: str | None = None) -> DomainError:
    return DomainError("invalid_request", message, field=field)
