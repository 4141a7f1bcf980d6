"""Helpers of the sandbox clock tests: advance through HTTP, wait for a sandbox order."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from test_orders_live import wait_status
from test_orders_sandbox import counts, new_workspace, place


def advance(client: httpx.Client, key: str | None = None, **body: Any) -> dict[str, Any]:
    headers = {"Idempotency-Key": key} if key else {}
    answer = client.post("/sandbox/clock/advance", json=body, headers=headers)
    assert answer.status_code == 200, answer.text
    data: dict[str, Any] = answer.json()["data"]
    return data


def completed_order(client: httpx.Client, workspace: str | None = None, a: int = 1) -> dict[str, Any]:
    """A sandbox order, once `completed` (its POST may answer `in_progress` first)."""
    workspace = workspace or new_workspace(client)
    placed = place(client, counts(workspace, a=a))
    assert placed.status_code == 201, placed.text
    return wait_status(client, placed.json()["data"]["id"], "completed")


def new_key_header() -> str:
    return str(uuid.uuid4())
