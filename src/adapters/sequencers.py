"""The four sequencer kinds (u, i, m, w) behind one port, and the deterministic simulator shipped.

Simulated outcomes (decisions.md section 5), like test card numbers:

| input | outcome |
| --- | --- |
| `api_key` starting with `super_` on kind u | `sequencer_super_admin_key` (400) |
| `api_key` equal to `invalid` (any kind), or login `password` equal to `invalid` | `provider_credentials_invalid` (422) |
| `api_key` equal to `unavailable` (any kind) | `provider_unavailable` (503) |
| any other key | accepted; kinds u, i, m get a provider workspace id derived from the key, kind w keeps the remote `workspace_id` sent |

Kind m clients are numbered from 1001 upwards inside each main account.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from domain.errors import DomainError, ProviderUnavailable

if TYPE_CHECKING:
    from runtime.container import Container

FIRST_CLIENT_ID = 1001


@dataclass(frozen=True)
class SequencerCredentials:
    api_key: str
    workspace_id: str | None = None
    label: str | None = None
    email: str | None = None
    password: str | None = None

    @property
    def has_login_pair(self) -> bool:
        return bool(self.email and self.password)

    def to_json(self) -> dict[str, Any]:
        return {
            "api_key": self.api_key,
            "workspace_id": self.workspace_id,
            "label": self.label,
            "email": self.email,
            "password": self.password,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SequencerCredentials:
        return cls(**{k: data.get(k) for k in ("workspace_id", "label", "email", "password")},
                   api_key=str(data["api_key"]))


class Sequencers(Protocol):
    def connect(self, kind: str, credentials: SequencerCredentials) -> str:
        """Check the credentials with the provider; answer the provider's workspace id."""
        ...

    def create_client(
        self,
        kind: str,
        credentials: SequencerCredentials,
        existing_client_ids: list[int],
        *,
        email: str,
        first_name: str,
        last_name: str,
    ) -> int:
        """Create a client account inside a kind m main account; answer its client id."""
        ...

    def check_login(self, kind: str, email: str, password: str, field: str) -> None:
        """Check a login pair an order brings for its destination (kind i)."""
        ...


class SimulatedSequencers:
    def connect(self, kind: str, credentials: SequencerCredentials) -> str:
        self._check_key(kind, credentials)
        if kind == "w" and credentials.workspace_id:
            return credentials.workspace_id
        digest = hashlib.sha256(f"{kind}:{credentials.api_key}".encode()).digest()
        return str(10_000_000 + int.from_bytes(digest[:8], "big") % 90_000_000)

    def create_client(
        self,
        kind: str,
        credentials: SequencerCredentials,
        existing_client_ids: list[int],
        *,
        email: str,
        first_name: str,
        last_name: str,
    ) -> int:
        if kind != "m":
            raise DomainError(
                "provider_not_supported",
                "Only kind m sequencers have client accounts.",
                field="workspace_id",
            )
        self._check_key(kind, credentials)
        return max([FIRST_CLIENT_ID - 1, *existing_client_ids]) + 1

    def check_login(self, kind: str, email: str, password: str, field: str) -> None:
        _refuse_login(password, field)

    @staticmethod
    def _check_key(kind: str, credentials: SequencerCredentials) -> None:
        key = credentials.api_key
        if key == "unavailable":
            raise ProviderUnavailable(
                "The sequencing provider did not answer; retry later.", details={"provider": kind}
            )
        if key == "invalid":
            raise DomainError(
                "provider_credentials_invalid",
                "The provider rejected this API key.",
                field="credentials.api_key",
            )
        if kind == "u" and key.startswith("super_"):
            raise DomainError(
                "sequencer_super_admin_key",
                "A super-admin key is not accepted; use a workspace-level or user-level API key.",
                field="credentials.api_key",
            )
        _refuse_login(credentials.password, "credentials.password")


def _refuse_login(password: str | None, field: str) -> None:
    if password == "invalid":
        raise DomainError("provider_credentials_invalid", "The provider rejected this login.",
                          field=field)


def sequencers_of(container: Container) -> Sequencers:
    """The sequencer port of this container (the simulator unless one was installed)."""
    found: Sequencers = container.extras.setdefault("sequencers", SimulatedSequencers())
    return found
