"""How a provider workspace looks in responses and lists (never with its credentials: the
shape has no place for them)."""

from __future__ import annotations

import msgspec

from domain.workspaces import Workspace
from infra.clock import iso
from infra.ids import public_id
from schema.vocabulary import Active, Provider, provider_kind
from views.pages import Links, Meta


class Customer(msgspec.Struct, kw_only=True):
    id: str
    external_id: str | None
    name: str | None
    email: str | None


class WorkspaceOut(msgspec.Struct, kw_only=True):
    workspace_id: str
    name: str
    provider: Provider
    provider_workspace_id: str
    status: Active
    has_login_pair: bool
    customer_id: str | None
    customer: Customer | None
    created_at: str
    updated_at: str


class WorkspaceResponse(msgspec.Struct):
    data: WorkspaceOut


class WorkspacePage(msgspec.Struct):
    data: list[WorkspaceOut]
    links: Links
    meta: Meta


def customer_of(record: dict[str, str | None] | None) -> Customer | None:
    """The stored customer tracking record (`services.accounts.workspaces`) as the view."""
    return None if record is None else msgspec.convert(record, Customer)


def workspace_view(workspace: Workspace) -> WorkspaceOut:
    return WorkspaceOut(
        workspace_id=public_id("wrk", workspace.id),
        name=workspace.name,
        provider=provider_kind(workspace.provider),
        provider_workspace_id=workspace.provider_workspace_id,
        status="active",
        has_login_pair=workspace.has_login_pair,
        customer_id=workspace.customer_id,
        customer=customer_of(workspace.customer),
        created_at=iso(workspace.created_at),
        updated_at=iso(workspace.updated_at),
    )
