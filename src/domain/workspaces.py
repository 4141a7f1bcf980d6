"""Provider workspaces: a partner's connection to a sequencing tool, the routing target of orders.

Credentials reach this aggregate already sealed (encrypted): a stored event is never secret-free
once written, so the plain values must never be in one.
"""

from __future__ import annotations

from typing import Any, ClassVar

from eventsourcing.domain import Aggregate, event

from domain.creation_ids import created_as

PROVIDERS = ("u", "i", "m", "w")
ACTIVE = "active"


class Workspace(Aggregate):
    # Its events, made by `@event` below: named here so that code using them is checked.
    CredentialsReplaced: ClassVar[type[Aggregate.Event]]
    Renamed: ClassVar[type[Aggregate.Event]]
    ClientCreated: ClassVar[type[Aggregate.Event]]

    create_id = created_as("workspace")

    @event("Created")
    def __init__(
        self,
        *,
        org_id: str,
        environment: str,
        name: str,
        provider: str,
        provider_workspace_id: str,
        credentials_sealed: str,
        has_login_pair: bool,
        customer: dict[str, Any] | None,
        created_at: float,
    ) -> None:
        self.org_id = org_id
        self.environment = environment
        self.name = name
        self.provider = provider
        self.provider_workspace_id = provider_workspace_id
        self.credentials_sealed = credentials_sealed
        self.has_login_pair = has_login_pair
        self.customer = customer
        self.status = ACTIVE
        self.created_at = created_at
        self.updated_at = created_at
        self.client_ids: list[int] = []

    @property
    def tenant(self) -> str:
        return f"{self.org_id}:{self.environment}"

    @property
    def customer_id(self) -> str | None:
        """The `cus_` id of the tracked customer, if the workspace has one."""
        return None if self.customer is None else str(self.customer["id"])

    def has_client(self, client_id: int) -> bool:
        """Whether `client_id` is a client account created in this (kind M) workspace."""
        return client_id in self.client_ids

    def owned_by(self, org_id: str, environment: str) -> bool:
        return self.org_id == org_id and self.environment == environment

    def replace_credentials(
        self,
        *,
        credentials_sealed: str,
        has_login_pair: bool,
        provider_workspace_id: str,
        at: float,
    ) -> None:
        self._credentials_replaced(
            credentials_sealed=credentials_sealed,
            has_login_pair=has_login_pair,
            provider_workspace_id=provider_workspace_id,
            at=at,
        )

    @event("CredentialsReplaced")
    def _credentials_replaced(
        self,
        *,
        credentials_sealed: str,
        has_login_pair: bool,
        provider_workspace_id: str,
        at: float,
    ) -> None:
        self.credentials_sealed = credentials_sealed
        self.has_login_pair = has_login_pair
        self.provider_workspace_id = provider_workspace_id
        self.updated_at = at

    def rename(self, name: str, at: float) -> None:
        if name != self.name:
            self._renamed(name=name, at=at)

    @event("Renamed")
    def _renamed(self, *, name: str, at: float) -> None:
        self.name = name
        self.updated_at = at

    def record_client(self, client_id: int, user_id: str, at: float) -> None:
        self._client_created(client_id=client_id, user_id=user_id, at=at)

    @event("ClientCreated")
    def _client_created(self, *, client_id: int, user_id: str, at: float) -> None:
        self.client_ids = [*self.client_ids, client_id]
        self.updated_at = at
