"""Closed vocabularies of the answers, as types: the OpenAPI document lists each as an `enum`,
so a generated client gets an enumeration instead of a bare string. `test_openapi_contract`
holds each equal to the domain's own list."""

from __future__ import annotations

from typing import Literal

import msgspec

Environment = Literal["test", "live"]
Preset = Literal["full", "limited", "read"]
Suite = Literal["suite_a", "suite_b"]
Provider = Literal["u", "i", "m", "w"]
OrderType = Literal["order", "purchase"]
OrderStatus = Literal[
    "in_progress", "completed", "failed", "action_required", "cancel_scheduled", "cancelled"
]
DomainStatus = Literal["available", "in_progress", "active", "failed", "action_required"]
ActionStatus = Literal["pending", "resolved", "cancelled"]
ImportJobStatus = Literal["in_progress", "completed", "failed", "action_required"]
ImportItemStatus = Literal["queued", "awaiting_nameservers", "completed", "failed"]
SwapType = Literal["standard", "premium", "user_names"]
SwapStatus = Literal["created", "in_progress", "completed", "failed", "action_required"]
BundleStatus = Literal["active", "archived"]
Active = Literal["active"]  # users, workspaces and inboxes: no other state yet


def provider_kind(kind: str) -> Provider:
    """A stored sequencer kind as the closed vocabulary (a ValueError for anything else)."""
    known: Provider = msgspec.convert(kind, Provider)
    return known
