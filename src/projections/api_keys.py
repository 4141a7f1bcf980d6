"""API keys per organization, for operators (the secret hash is never copied here)."""

from __future__ import annotations

from typing import Any

from domain.api_keys import ApiKey
from infra.ids import public_id
from projections.base import ReadModel, on


class ApiKeyList(ReadModel):
    replay_weight = 9
    name = "api_keys"
    tables = ("api_keys",)
    ddl = (
        "CREATE TABLE IF NOT EXISTS api_keys (id TEXT PRIMARY KEY, org_id TEXT NOT NULL, "
        "environment TEXT NOT NULL, preset TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL, "
        "revoked_at DOUBLE PRECISION)",
        "CREATE INDEX IF NOT EXISTS api_keys_org ON api_keys (org_id)",
    )

    @on(ApiKey.Issued)
    def issued(self, cur: Any, event: Any, position: int) -> None:
        cur.execute(
            "INSERT INTO api_keys (id, org_id, environment, preset, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (
                public_id("key", event.originator_id),
                event.org_id,
                event.environment,
                event.preset,
                event.created_at,
            ),
        )

    @on(ApiKey.Revoked)
    def revoked(self, cur: Any, event: Any, position: int) -> None:
        cur.execute(
            "UPDATE api_keys SET revoked_at = ? WHERE id = ?",
            (event.at, public_id("key", event.originator_id)),
        )


def keys_of(cur: Any, org_id: str) -> list[dict[str, Any]]:
    return list(
        cur.execute(
            "SELECT id, org_id, environment, preset, created_at, revoked_at FROM api_keys "
            "WHERE org_id = ? ORDER BY created_at, id",
            (org_id,),
        ).fetchall()
    )
