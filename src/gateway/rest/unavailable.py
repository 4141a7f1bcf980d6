"""503 `service_unavailable`: the service cannot store what a request needs (a full disk).

Nothing was written, so the request may be retried as it was, with the same Idempotency-Key
when it had one. A code beyond the spec's list (decisions.md 4 allows one where none fits):
`provider_unavailable` names a provider outside, `internal_error` a fault on our side that a
retry may not cure, while this one passes when space is back, without a restart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from domain.errors import DomainError, RetryLater
from infra.storage_health import storage_full

if TYPE_CHECKING:
    from runtime.container import Container

RETRY_AFTER_SECONDS = 5


class StorageUnavailable(RetryLater):
    def __init__(self) -> None:
        super().__init__(
            "service_unavailable",
            "The service cannot store this request right now; nothing was written. "
            "Retry after the number of seconds in Retry-After.",
            RETRY_AFTER_SECONDS,
            details={"retry_after_seconds": RETRY_AFTER_SECONDS, "reason": "storage_full"},
        )


def unavailable_if_storage_full(error: Exception, container: Container | None = None) -> Exception:
    """`StorageUnavailable` for an error a full disk raised (recorded for readiness), else the
    error itself."""
    if isinstance(error, DomainError) or not storage_full(error):
        return error
    if container is not None:
        container.storage_health.failed("event_store", error)
    return StorageUnavailable()
