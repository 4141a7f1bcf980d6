"""The ids of the resources a request creates.

An idempotent request that a retry takes over (its first attempt's process died) must find
what the first attempt saved, not create it a second time: so inside such a request a new
resource's id derives from the request's claim and the resource's kind, and the retry derives
the same one. The service layer installs the derivation; elsewhere ids are random.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

CREATION_IDS: ContextVar[Callable[[str], uuid.UUID] | None] = ContextVar(
    "creation_ids", default=None
)


def creation_id(kind: str) -> uuid.UUID:
    """The id of a new `kind` aggregate: one per kind and request (no request creates two
    resources of one kind under a claim), random outside an idempotent request."""
    derive = CREATION_IDS.get()
    return derive(kind) if derive is not None else uuid.uuid4()


def created_as(kind: str) -> Any:
    """An aggregate class's `create_id` for resources of `kind`: `create_id = created_as(...)`."""

    def create_id(*_: Any, **__: Any) -> uuid.UUID:
        return creation_id(kind)

    return staticmethod(create_id)
