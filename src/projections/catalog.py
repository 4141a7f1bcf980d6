"""Catalog read models: workspaces, bundles and users per tenant, for the list endpoints.

Each row keeps the rendered resource as JSON (`doc`) beside the columns lists filter on.
Credentials are never copied here, not even sealed.
"""

from __future__ import annotations

from typing import Any

import msgspec

from domain.bundles import Bundle
from domain.users import User
from domain.workspaces import Workspace
from infra.clock import iso
from infra.ids import public_id
from projections.base import ReadModel, on
from projections.catalog_rows import LiveRows, ReplayRows
from schema.vocabulary import provider_kind
from views.bundles import BundleOut, sized_bundle
from views.users import SequencerLink, UserOut
from views.workspaces import WorkspaceOut, customer_of


def _tenant(event: Any) -> str:
    return f"{event.org_id}:{event.environment}"


class CatalogLists(ReadModel):
    replay_weight = 14
    name = "catalog"
    tables = ("catalog_workspaces", "catalog_bundles", "catalog_users")
    ddl = (
        "CREATE TABLE IF NOT EXISTS catalog_workspaces (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, "
        "position BIGINT NOT NULL, provider TEXT NOT NULL, customer_id TEXT, doc TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS catalog_workspaces_page "
        "ON catalog_workspaces (tenant, position)",
        "CREATE TABLE IF NOT EXISTS catalog_bundles (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, "
        "position BIGINT NOT NULL, status TEXT NOT NULL, doc TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS catalog_bundles_page ON catalog_bundles (tenant, position)",
        "CREATE TABLE IF NOT EXISTS catalog_users (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, "
        "position BIGINT NOT NULL, workspace_id TEXT NOT NULL, doc TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS catalog_users_page ON catalog_users (tenant, position)",
    )
    # Live: written at once, edits read back. A replay's own instances hold rows back.
    _rows: LiveRows | ReplayRows = LiveRows()

    def replaying(self) -> None:
        self._rows = ReplayRows()

    def write_held(self, cur: Any) -> None:
        self._rows.write_held(cur)

    @on(Workspace.Created)
    def workspace_created(self, cur: Any, event: Any, position: int) -> None:
        row_id = public_id("wrk", event.originator_id)
        customer = customer_of(event.customer)
        created_at = iso(event.created_at)
        view = WorkspaceOut(
            workspace_id=row_id,
            name=event.name,
            provider=provider_kind(event.provider),
            provider_workspace_id=event.provider_workspace_id,
            status="active",
            has_login_pair=event.has_login_pair,
            customer_id=None if customer is None else customer.id,
            customer=customer,
            created_at=created_at,
            updated_at=created_at,
        )
        columns = {"id": row_id, "tenant": _tenant(event), "position": position,
                   "provider": event.provider, "customer_id": view.customer_id}
        self._rows.insert(cur, "catalog_workspaces", columns, msgspec.to_builtins(view))

    @on(Workspace.CredentialsReplaced)
    def workspace_credentials(self, cur: Any, event: Any, position: int) -> None:
        self._edit_workspace(
            cur,
            event,
            has_login_pair=event.has_login_pair,
            provider_workspace_id=event.provider_workspace_id,
        )

    @on(Workspace.Renamed)
    def workspace_renamed(self, cur: Any, event: Any, position: int) -> None:
        self._edit_workspace(cur, event, name=event.name)

    @on(Workspace.ClientCreated)
    def workspace_client(self, cur: Any, event: Any, position: int) -> None:
        self._edit_workspace(cur, event)

    def _edit_workspace(self, cur: Any, event: Any, **changes: str | bool) -> None:
        """The stored view with `changes`, updated at the event's time."""
        row_id = public_id("wrk", event.originator_id)
        view = msgspec.convert(self._rows.load(cur, "catalog_workspaces", row_id), WorkspaceOut)
        edited = msgspec.structs.replace(view, **changes, updated_at=iso(event.at))
        self._rows.store(cur, "catalog_workspaces", row_id, msgspec.to_builtins(edited))

    @on(Bundle.Created)
    def bundle_created(self, cur: Any, event: Any, position: int) -> None:
        row_id = public_id("bun", event.originator_id)
        view = sized_bundle(
            bundle_id=row_id,
            terms=event.terms,
            sizing=event.sizing,
            status="active",
            created_at=event.created_at,
            updated_at=event.created_at,
        )
        columns = {"id": row_id, "tenant": _tenant(event), "position": position, "status": "active"}
        self._rows.insert(cur, "catalog_bundles", columns, msgspec.to_builtins(view))

    @on(Bundle.Edited)
    def bundle_edited(self, cur: Any, event: Any, position: int) -> None:
        row_id = public_id("bun", event.originator_id)
        stored = msgspec.convert(self._rows.load(cur, "catalog_bundles", row_id), BundleOut)
        view = sized_bundle(
            bundle_id=row_id,
            terms=event.terms,
            sizing=event.sizing,
            status=stored.status,
            created_at=0.0,
            updated_at=event.at,
        )
        edited = msgspec.structs.replace(view, created_at=stored.created_at)
        self._rows.store(cur, "catalog_bundles", row_id, msgspec.to_builtins(edited))

    @on(Bundle.Archived)
    def bundle_archived(self, cur: Any, event: Any, position: int) -> None:
        row_id = public_id("bun", event.originator_id)
        stored = msgspec.convert(self._rows.load(cur, "catalog_bundles", row_id), BundleOut)
        archived = msgspec.structs.replace(stored, status="archived", updated_at=iso(event.at))
        self._rows.store(
            cur, "catalog_bundles", row_id, msgspec.to_builtins(archived), status="archived"
        )

    @on(User.Created)
    def user_created(self, cur: Any, event: Any, position: int) -> None:
        row_id = public_id("usr", event.originator_id)
        doc = msgspec.to_builtins(
            UserOut(
                id=row_id,
                email=event.email,
                first_name=event.first_name,
                last_name=event.last_name,
                status="active",
                sequencer=SequencerLink(provider=event.provider, client_id=event.client_id),
                workspace_id=event.workspace_id,
                created_at=iso(event.created_at),
            )
        )
        columns = {"id": row_id, "tenant": _tenant(event), "position": position,
                   "workspace_id": event.workspace_id}
        self._rows.insert(cur, "catalog_users", columns, doc)
