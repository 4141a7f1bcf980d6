"""Imports every module that registers public-event mappers (one line per capability)."""

from __future__ import annotations

import importlib

MAPPER_MODULES: list[str] = [
    "webhooks.test_event",
    "webhooks.order_events",
    "webhooks.domain_events",
    "webhooks.pool_events",
    "webhooks.swap_events",
]


def load_mappers() -> None:
    for module in MAPPER_MODULES:
        importlib.import_module(module)
