"""API keys: environment and permission preset fixed at issue; only a hash of the secret is kept."""

from __future__ import annotations

import hashlib
import uuid
from typing import Any, ClassVar

from eventsourcing.domain import Aggregate, event

ENVIRONMENTS = ("test", "live")
PRESETS = ("full", "limited", "read")
SECRET_PREFIX = {"test": "pk_test_", "live": "pk_live_"}
_KEY_NAMESPACE = uuid.UUID("6f1d3c1e-2b7a-4c55-9d0e-8a1f5b2c7d90")


def hash_secret(secret: str) -> str:
    # Secrets carry 32 random bytes, so one SHA-256 is enough; a slow hash adds nothing here.
    return hashlib.sha256(secret.encode()).hexdigest()


def key_id_for_hash(secret_hash: str) -> uuid.UUID:
    """The aggregate id is derived from the hash, so a request finds its key by one lookup."""
    return uuid.uuid5(_KEY_NAMESPACE, secret_hash)


class ApiKey(Aggregate):
    # Its events, made by `@event` below: named here so that code using them is checked.
    Issued: ClassVar[type[Aggregate.Event]]
    Revoked: ClassVar[type[Aggregate.Event]]

    @staticmethod
    def create_id(*_: Any, secret_hash: str, **__: Any) -> uuid.UUID:
        return key_id_for_hash(secret_hash)

    @event("Issued")
    def __init__(
        self,
        *,
        org_id: str,
        environment: str,
        preset: str,
        secret_hash: str,
        created_at: float,
    ) -> None:
        self.org_id = org_id
        self.environment = environment
        self.preset = preset
        self.secret_hash = secret_hash
        self.created_at = created_at
        self.revoked_at: float | None = None

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None

    def revoke(self, at: float) -> None:
        if not self.is_revoked:
            self._revoked(at=at)

    @event("Revoked")
    def _revoked(self, *, at: float) -> None:
        self.revoked_at = at
