"""Users: a client account created through the sequencer adapter inside a kind m workspace."""

from __future__ import annotations

from typing import TYPE_CHECKING

from adapters.sequencers import sequencers_of
from domain.errors import DomainError, NotFound, invalid
from domain.users import User
from infra.idempotency import created_before
from infra.ids import parse_id, public_id
from services.accounts.commands import MAX_TEXT, CreateUser
from services.accounts.keys import Principal
from services.accounts.workspaces import (
    EMAIL,
    credentials_of,
    load_target_workspace,
)
from views.users import UserOut, user_view

if TYPE_CHECKING:
    from runtime.container import Container


def load_user(container: Container, org_id: str, environment: str, user_id: str) -> User:
    found = container.store.find(parse_id("usr", user_id), User)
    if not isinstance(found, User) or not found.owned_by(org_id, environment):
        raise NotFound("user")
    return found


def get_user(container: Container, principal: Principal, user_id: str) -> UserOut:
    return user_view(load_user(container, principal.org_id, principal.environment, user_id))


def create_user(container: Container, principal: Principal, command: CreateUser) -> UserOut:
    org_id, environment = principal.org_id, principal.environment
    email = command.email.strip()
    if not EMAIL.match(email) or len(email) > MAX_TEXT:
        raise invalid("email is not an email address.", "email")
    names = {"first_name": command.first_name.strip(), "last_name": command.last_name.strip()}
    for key, value in names.items():
        if not value or len(value) > MAX_TEXT:
            raise invalid(f"{key} must be 1 to {MAX_TEXT} characters.", key)

    def attempt() -> UserOut:
        if (earlier := created_before(container, "user", User)) is not None:
            return user_view(earlier)  # saved by an earlier attempt of this request
        workspace = load_target_workspace(container, org_id, environment, command.workspace_id)
        if workspace.provider != "m":
            raise DomainError(
                "provider_not_supported",
                "Users are client accounts of a kind m workspace; this workspace is kind "
                f"{workspace.provider}.",
                field="workspace_id",
                details={"provider": workspace.provider},
            )
        client_id = sequencers_of(container).create_client(
            workspace.provider,
            credentials_of(container, workspace),
            workspace.client_ids,
            email=email,
            first_name=names["first_name"],
            last_name=names["last_name"],
        )
        now = container.clock.now()
        user = User(
            org_id=org_id,
            environment=environment,
            workspace_id=public_id("wrk", workspace.id),
            provider=workspace.provider,
            client_id=client_id,
            email=email,
            first_name=names["first_name"],
            last_name=names["last_name"],
            created_at=now,
        )
        workspace.record_client(client_id, public_id("usr", user.id), now)
        # One atomic save: a user never exists without its client on the workspace.
        container.unit_of_work.save(user, workspace)
        return user_view(user)

    return container.unit_of_work.retrying(attempt)
