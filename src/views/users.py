"""How a user looks in responses and lists (one shape, from the aggregate or its creation)."""

from __future__ import annotations

import msgspec

from domain.users import User
from infra.clock import iso
from infra.ids import public_id
from schema.vocabulary import Active, Provider, provider_kind
from views.pages import Links, Meta


class SequencerLink(msgspec.Struct):
    provider: Provider
    client_id: int


class UserOut(msgspec.Struct, kw_only=True):
    id: str
    email: str
    first_name: str
    last_name: str
    status: Active
    sequencer: SequencerLink
    workspace_id: str
    created_at: str


class UserResponse(msgspec.Struct):
    data: UserOut


class UserPage(msgspec.Struct):
    data: list[UserOut]
    links: Links
    meta: Meta


def user_view(user: User) -> UserOut:
    return UserOut(
        id=public_id("usr", user.id),
        email=user.email,
        first_name=user.first_name,
        last_name=user.last_name,
        status="active",
        sequencer=SequencerLink(provider=provider_kind(user.provider), client_id=user.client_id),
        workspace_id=user.workspace_id,
        created_at=iso(user.created_at),
    )
