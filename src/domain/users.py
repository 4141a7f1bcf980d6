"""Users: client accounts created inside a kind m sequencer main account."""

from __future__ import annotations

from eventsourcing.domain import Aggregate, event

from domain.creation_ids import created_as

ACTIVE = "active"


class User(Aggregate):
    create_id = created_as("user")

    @event("Created")
    def __init__(
        self,
        *,
        org_id: str,
        environment: str,
        workspace_id: str,
        provider: str,
        client_id: int,
        email: str,
        first_name: str,
        last_name: str,
        created_at: float,
    ) -> None:
        self.org_id = org_id
        self.environment = environment
        self.workspace_id = workspace_id
        self.provider = provider
        self.client_id = client_id
        self.email = email
        self.first_name = first_name
        self.last_name = last_name
        self.status = ACTIVE
        self.created_at = created_at

    def owned_by(self, org_id: str, environment: str) -> bool:
        return self.org_id == org_id and self.environment == environment
