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
from views.users import SequencerLink, UserOut


def _tenant(event: Any) -> str:
    return f"{event.org_id}:{event.environment}"


def bundle_doc(terms: dict[str, Any], sizing: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": terms["name"],
        "monthly_sending_volume": terms["monthly_sending_volume"],
        "suite_a_percent": terms["suite_a_percent"],
        "suite_b_percent": terms["suite_b_percent"],
        "send_on_weekends": terms["send_on_weekends"],
        "suite_a_licenses": sizing["suite_a_inboxes_per_domain"],
        "suite_b_inboxes_per_domain": sizing["suite_b_inboxes_per_domain"],
        "effective": sizing["effective"],
        "inboxes": sizing["inboxes"],
        "required_domains": sizing["required_domains"],
    }


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
        customer = event.customer
        created_at = iso(event.created_at)
        doc = {
            "workspace_id": row_id,
            "name": event.name,
            "provider": event.provider,
            "provider_workspace_id": event.provider_workspace_id,
            "status": "active",
            "has_login_pair": event.has_login_pair,
            "customer_id": None if customer is None else customer["id"],
            "customer": customer,
            "created_at": created_at,
            "updated_at": created_at,
        }
        columns = {"id": row_id, "tenant": _tenant(event), "position": position,
                   "provider": event.provider, "customer_id": doc["customer_id"]}
        self._rows.insert(cur, "catalog_workspaces", columns, doc)

    @on(Workspace.CredentialsReplaced)
    def workspace_credentials(self, cur: Any, event: Any, position: int) -> None:
        row_id = public_id("wrk", event.originator_id)
        doc = self._rows.load(cur, "catalog_workspaces", row_id)
        doc["has_login_pair"] = event.has_login_pair
        doc["provider_workspace_id"] = event.provider_workspace_id
        doc["updated_at"] = iso(event.at)
        self._rows.store(cur, "catalog_workspaces", row_id, doc)

    @on(Workspace.Renamed)
    def workspace_renamed(self, cur: Any, event: Any, position: int) -> None:
        row_id = public_id("wrk", event.originator_id)
        doc = self._rows.load(cur, "catalog_workspaces", row_id)
        doc["name"] = event.name
        doc["updated_at"] = iso(event.at)
        self._rows.store(cur, "catalog_workspaces", row_id, doc)

    @on(Workspace.ClientCreated)
    def workspace_client(self, cur: Any, event: Any, position: int) -> None:
        row_id = public_id("wrk", event.originator_id)
        doc = self._rows.load(cur, "catalog_workspaces", row_id)
        doc["updated_at"] = iso(event.at)
        self._rows.store(cur, "catalog_workspaces", row_id, doc)

    @on(Bundle.Created)
    def bundle_created(self, cur: Any, event: Any, position: int) -> None:
        row_id = public_id("bun", event.originator_id)
        created_at = iso(event.created_at)
        doc = {
            "id": row_id,
            **bundle_doc(event.terms, event.sizing),
            "status": "active",
            "created_at": created_at,
            "updated_at": created_at,
        }
        columns = {"id": row_id, "tenant": _tenant(event), "position": position, "status": "active"}
        self._rows.insert(cur, "catalog_bundles", columns, doc)

    @on(Bundle.Edited)
    def bundle_edited(self, cur: Any, event: Any, position: int) -> None:
        row_id = public_id("bun", event.originator_id)
        doc = self._rows.load(cur, "catalog_bundles", row_id)
        doc.update(bundle_doc(event.terms, event.sizing))
        doc["updated_at"] = iso(event.at)
        self._rows.store(cur, "catalog_bundles", row_id, doc)

    @on(Bundle.Archived)
    def bundle_archived(self, cur: Any, event: Any, position: int) -> None:
        row_id = public_id("bun", event.originator_id)
        doc = self._rows.load(cur, "catalog_bundles", row_id)
        doc["status"] = "archived"
        doc["updated_at"] = iso(event.at)
        self._rows.store(cur, "catalog_bundles", row_id, doc, status="archived")

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
