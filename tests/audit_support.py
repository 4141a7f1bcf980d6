"""A history with events of every kind, and raw access to the stored events table (the way an
attacker with database access would change it)."""

from __future__ import annotations

from typing import Any

import psycopg
from conftest import PG_URL, RunningService
from test_orders_sandbox import wait_order

from services.accounts.commands import CreditWallet
from services.accounts.wallet import credit_wallet
from webhooks.commands import SetWebhookEndpoint
from webhooks.endpoints import endpoints_of


def build_history(service: RunningService) -> dict[str, Any]:
    """Accounts, keys, rate limits, webhooks, wallet, and what partners do over REST."""
    c = service.container
    org_id = service.new_org("Audited", rate_rps=3.0)
    other_org = service.new_org("Bystander")
    c.accounts.set_rate_limit(org_id, 4.0, 40)
    secret = service.new_key(org_id, "test", "full")
    spare = c.accounts.create_key(org_id, "live", "read")
    c.accounts.rotate_key(spare.id)
    c.accounts.revoke_key(spare.id)
    credit_wallet(c, CreditWallet(org_id=org_id, amount_cents=5000))
    endpoints_of(c).set_url(org_id, SetWebhookEndpoint(url="https://hooks.example.com/partner"))
    endpoints_of(c).send_test(org_id, "test")
    partner = service.client(secret)
    bundle = partner.post(
        "/bundles", json={"name": "Starter", "monthly_sending_volume": 20000, "send_on_weekends": False}
    )
    assert bundle.status_code == 201, bundle.text
    bundle_id = bundle.json()["data"]["id"] if "data" in bundle.json() else bundle.json()["id"]
    assert partner.post(f"/bundles/{bundle_id}/archive").status_code in (200, 201)
    workspace = partner.post(
        "/workspaces",
        json={"name": "Outbound", "provider": "u", "credentials": {"api_key": "wk_live_1"}},
        headers={"Idempotency-Key": "audit-ws-1"},
    )
    assert workspace.status_code == 201, workspace.text
    workspace_id = workspace.json().get("data", workspace.json())["workspace_id"]
    order = partner.post(
        "/orders",
        json={"destination": {"workspace_id": workspace_id}, "suite_a": {"domains": 1, "inboxes_per_domain": 2}},
        headers={"Idempotency-Key": "audit-order-1"},
    )
    assert order.status_code in (200, 201, 202), order.text
    if "worker" in service.roles:  # its completion belongs to the history too
        wait_order(partner, order.json()["data"]["id"])
    service.new_key(other_org, "live", "limited")
    service.wait_projections()
    return {"org_id": org_id, "other_org": other_org, "secret": secret, "key_id": spare.id}


def events_table(service: RunningService) -> str:
    return str(service.container.store.recorder.events_table_name)


def tamper_event(service: RunningService, position: int) -> None:
    """Change one stored event's state in place (still valid JSON: a trailing space)."""
    settings = service.container.settings
    table = events_table(service)
    if settings.database_url:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(
                f'UPDATE "{settings.database_schema}".{table} SET state = state || %s '
                "WHERE notification_id = %s",
                (b" ", position),
            )
        return
    import sqlite3

    with sqlite3.connect(settings.data_dir / "events.sqlite") as conn:
        conn.execute(f"UPDATE {table} SET state = CAST(state || X'20' AS BLOB) WHERE rowid = ?", (position,))


def delete_event(service: RunningService, position: int) -> None:
    settings = service.container.settings
    table = events_table(service)
    if settings.database_url:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(
                f'DELETE FROM "{settings.database_schema}".{table} WHERE notification_id = %s',
                (position,),
            )
        return
    import sqlite3

    with sqlite3.connect(settings.data_dir / "events.sqlite") as conn:
        conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (position,))
