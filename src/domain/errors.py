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


def invalid(message: str, field: str | None = None) -> DomainError:
    return DomainError("invalid_request", message, field=field)
