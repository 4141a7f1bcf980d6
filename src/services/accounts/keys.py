"""Organizations and API keys: issue, rotate, revoke, authenticate."""

from __future__ import annotations

import hmac
import secrets
import time
import unicodedata
import uuid
from dataclasses import dataclass
from typing import cast

from domain.api_keys import ENVIRONMENTS, PRESETS, SECRET_PREFIX, ApiKey, hash_secret
from domain.api_keys import key_id_for_hash as _key_id_for_hash
from domain.errors import DomainError, NotFound, invalid
from domain.organizations import Organization
from domain.sandbox_clocks import sandbox_clock_id
from infra.clock import SANDBOX, Clock
from infra.ids import parse_id, public_id
from infra.store import EventStore
from schema.vocabulary import Environment, Preset
from views.me import ApiKeyInfo, MeData, PartnerInfo


@dataclass(frozen=True)
class Principal:
    """Who is calling: the organization, environment and preset of a valid key."""

    key_id: str
    org_id: str
    org_name: str
    environment: str
    preset: str
    rate_rps: float | None
    rate_burst: int | None

    @property
    def tenant(self) -> str:
        """Scope of every resource: an organization's live and sandbox data never mix."""
        return f"{self.org_id}:{self.environment}"


def describe_me(principal: Principal) -> MeData:
    """`GET /me`: the calling key and its organization."""
    return MeData(
        # The key's record holds only these values (`domain.api_keys`); no check per call.
        api_key=ApiKeyInfo(
            cast(Environment, principal.environment), cast(Preset, principal.preset)
        ),
        partner=PartnerInfo(principal.org_id, principal.org_name),
    )


@dataclass(frozen=True)
class IssuedKey:
    id: str
    secret: str
    org_id: str
    environment: str
    preset: str


ORG_CACHE_SECONDS = 1.0
MAX_NAME = 200
MAX_RATE = 1_000_000.0  # requests per second
MAX_BURST = 1_000_000_000


@dataclass(frozen=True)
class Authenticated:
    """A valid key's principal and, for a sandbox key whose check read it, its sandbox clock's
    version (0: never advanced; None: not read)."""

    principal: Principal
    clock_version: int | None = None


@dataclass(frozen=True)
class _CachedKey:
    principal: Principal
    key_uuid: uuid.UUID
    key_version: int
    loaded_at: float
    # A sandbox key's clock, read with the key: one statement for the two checks a request
    # makes before it runs.
    clock_uuid: uuid.UUID | None


class Accounts:
    def __init__(self, store: EventStore, clock: Clock) -> None:
        self.store = store
        self.clock = clock
        # Per-process cache of authenticated keys. Each request still asks the store whether
        # the key has a newer event (one indexed read), so a revocation made by any process
        # is seen on the very next request; organization settings refresh within a second.
        self._keys: dict[str, _CachedKey] = {}

    def create_organization(
        self, name: str, rate_rps: float | None = None, rate_burst: int | None = None
    ) -> dict[str, object]:
        if not name.strip() or len(name.strip()) > MAX_NAME:
            raise invalid(f"Organization name must be 1 to {MAX_NAME} characters.", "name")
        if any(unicodedata.category(char) == "Cc" for char in name):
            raise invalid("Organization name must not hold control characters.", "name")
        _check_rate(rate_rps, rate_burst)
        org = Organization(
            name=name.strip(), rate_rps=rate_rps, rate_burst=rate_burst, created_at=self.clock.now()
        )
        self.store.save(org)
        return self.describe_organization(org)

    def describe_organization(self, org: Organization) -> dict[str, object]:
        return {
            "id": public_id("org", org.id),
            "name": org.name,
            "rate_rps": org.rate_rps,
            "rate_burst": org.rate_burst,
        }

    def organization(self, org_id: str) -> Organization:
        org = self.store.find(parse_id("org", org_id), Organization)
        if org is None:
            raise NotFound("organization")
        return org  # type: ignore[no-any-return]

    def set_rate_limit(
        self, org_id: str, rate_rps: float | None, rate_burst: int | None
    ) -> dict[str, object]:
        _check_rate(rate_rps, rate_burst)
        org = self.organization(org_id)
        org.change_rate_limit(rate_rps=rate_rps, rate_burst=rate_burst)
        self.store.save(org)
        return self.describe_organization(org)

    def create_key(self, org_id: str, environment: str, preset: str) -> IssuedKey:
        if environment not in ENVIRONMENTS:
            raise invalid("Environment must be test or live.", "environment")
        if preset not in PRESETS:
            raise invalid("Preset must be full, limited or read.", "preset")
        org = self.organization(org_id)
        secret = SECRET_PREFIX[environment] + secrets.token_urlsafe(32)
        key = ApiKey(
            org_id=public_id("org", org.id),
            environment=environment,
            preset=preset,
            secret_hash=hash_secret(secret),
            created_at=self.clock.now(),
        )
        self.store.save(key)
        return IssuedKey(public_id("key", key.id), secret, key.org_id, environment, preset)

    def revoke_key(self, key_id: str) -> dict[str, object]:
        key = self.store.find(parse_id("key", key_id), ApiKey)
        if key is None:
            raise NotFound("API key")
        key.revoke(self.clock.now())
        self.store.save(key)
        return {"id": key_id, "revoked": True}

    def rotate_key(self, key_id: str) -> IssuedKey:
        """A new key with the same organization, environment and preset; the old one keeps
        working until it is revoked, so a partner can roll keys without downtime."""
        key = self.store.find(parse_id("key", key_id), ApiKey)
        if key is None:
            raise NotFound("API key")
        if key.is_revoked:  # rotation replaces a working key; a revoked one has no successor
            raise DomainError("conflict", "This key is revoked; create a new key instead.")
        return self.create_key(key.org_id, key.environment, key.preset)

    def authenticate(self, secret: str) -> Principal | None:
        """The principal behind a bearer secret, or None (unknown, malformed or revoked)."""
        checked = self.check(secret)
        return None if checked is None else checked.principal

    def check(self, secret: str) -> Authenticated | None:
        """As `authenticate`, with a sandbox key's clock version read in the same statement
        as the key's (for the request's clock scope)."""
        if not secret.startswith(("pk_live_", "pk_test_")) or len(secret) > 200:
            return None
        secret_hash = hash_secret(secret)
        cached = self._keys.get(secret_hash)
        if cached is not None and time.monotonic() - cached.loaded_at <= ORG_CACHE_SECONDS:
            checked = self._still_valid(cached)
            if checked is not None:
                return checked
        self._keys.pop(secret_hash, None)
        loaded = self._load_principal(secret_hash)
        if loaded is None:
            return None
        principal, key_version = loaded
        clock_uuid = sandbox_clock_id(principal.org_id) if principal.environment == SANDBOX else None
        self._keys[secret_hash] = _CachedKey(
            principal, _key_id_for_hash(secret_hash), key_version, time.monotonic(), clock_uuid
        )
        return Authenticated(principal)

    def _still_valid(self, cached: _CachedKey) -> Authenticated | None:
        """The cached key's principal if the key has not changed since it was cached."""
        ids = [cached.key_uuid] if cached.clock_uuid is None else [cached.key_uuid, cached.clock_uuid]
        versions = self.store.latest_versions(ids)
        if versions.get(cached.key_uuid) != cached.key_version:
            return None
        if cached.clock_uuid is None:
            return Authenticated(cached.principal)
        return Authenticated(cached.principal, versions.get(cached.clock_uuid, 0))

    def _load_principal(self, secret_hash: str) -> tuple[Principal, int] | None:
        """The valid key's principal and the key's version as loaded."""
        key = self.store.find(_key_id_for_hash(secret_hash), ApiKey)
        if key is None or key.is_revoked:
            return None
        if not hmac.compare_digest(key.secret_hash, secret_hash):
            return None
        org = self.store.find(parse_id("org", key.org_id), Organization)
        if org is None:
            return None
        principal = Principal(
            key_id=public_id("key", key.id),
            org_id=key.org_id,
            org_name=org.name,
            environment=key.environment,
            preset=key.preset,
            rate_rps=org.rate_rps,
            rate_burst=org.rate_burst,
        )
        return principal, int(key.version)


def _check_rate(rate_rps: float | None, rate_burst: int | None) -> None:
    # `not (x > 0)` also refuses NaN, which would 500 every request of the organization;
    # infinity is no rate at all and does not print as JSON.
    if rate_rps is not None and not (0 < rate_rps <= MAX_RATE):
        raise invalid(
            f"The rate (requests per second) must be a positive number up to {MAX_RATE:g}.",
            "rate_rps",
        )
    # Bounded so the bucket's counters stay exact and fit every store's integer columns.
    if rate_burst is not None and not 1 <= rate_burst <= MAX_BURST:
        raise invalid(f"The burst must be 1 to {MAX_BURST:,} requests.", "rate_burst")
