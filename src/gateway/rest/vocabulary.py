"""The webhook event types as a type (the catalog's tuple is the list)."""

from __future__ import annotations

from typing import Annotated

from schema.rules import documented
from webhooks.catalog import EVENT_TYPES

# Too many to spell twice: the catalog's tuple is the list.
EventType = Annotated[str, documented(enum=list(EVENT_TYPES))]
