"""Public identifiers: a resource prefix and the aggregate's UUID in hex."""

from __future__ import annotations

import uuid

PREFIXES = frozenset(
    ["cus", "wrk", "bun", "ord", "dom", "pcl", "prp", "prl", "imp", "fwj", "brj", "swp", "act", "evt", "usr", "org", "key"]
)


def public_id(prefix: str, aggregate_id: uuid.UUID) -> str:
    return f"{prefix}_{aggregate_id.hex}"


def parse_id(prefix: str, value: str) -> uuid.UUID | None:
    """The UUID behind a public id, or None when it is not one of this prefix."""
    head, sep, tail = value.partition("_")
    # Exact, as issued (lower-case hex): the list filters compare ids as text, so an id in
    # another case must not name a resource here while finding nothing there.
    if not sep or head != prefix or len(tail) != 32 or tail != tail.lower():
        return None
    try:
        return uuid.UUID(hex=tail)
    except ValueError:
        return None


def new_id() -> uuid.UUID:
    return uuid.uuid4()
