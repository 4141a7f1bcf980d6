"""Imports every module that registers a role, so `serve` knows them all."""

from __future__ import annotations

import importlib

ROLE_MODULES: list[str] = [
    "webhooks.roles",
    "gateway.grpc.role",
    "audit.role",
    "fulfillment.worker",
    "services.domain_worker",
    "services.pool_worker",
    "fulfillment.swap_worker",
]


def load_roles() -> None:
    for module in ROLE_MODULES:
        importlib.import_module(module)
