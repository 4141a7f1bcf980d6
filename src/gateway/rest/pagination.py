"""Cursor pagination shared by every list: opaque, signed, bound to the list and its filters."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from domain.errors import DomainError

DEFAULT_PER_PAGE = 25
MAX_PER_PAGE = 100


def bad_token() -> DomainError:
    return DomainError(
        "invalid_request",
        "page_token is not valid for this list; use links.next as given.",
        field="page_token",
    )


class PageTokens:
    def __init__(self, secret: str) -> None:
        self._key = hashlib.sha256(("page-token:" + secret).encode()).digest()

    def _scope(self, path: str, filters: Mapping[str, Any], tenant: str) -> str:
        canonical = json.dumps(
            {"p": path, "f": {k: v for k, v in filters.items() if v is not None}, "t": tenant},
            sort_keys=True,
        )
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    def encode(self, after: Any, path: str, filters: Mapping[str, Any], tenant: str) -> str:
        payload = json.dumps({"a": after, "s": self._scope(path, filters, tenant)}).encode()
        mac = hmac.new(self._key, payload, hashlib.sha256).digest()[:16]
        return base64.urlsafe_b64encode(payload + mac).decode().rstrip("=")

    def decode(self, token: str, path: str, filters: Mapping[str, Any], tenant: str) -> Any:
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        except (ValueError, TypeError):
            raise bad_token() from None
        payload, mac = raw[:-16], raw[-16:]
        expected = hmac.new(self._key, payload, hashlib.sha256).digest()[:16]
        if len(raw) <= 16 or not hmac.compare_digest(mac, expected):
            raise bad_token()
        data = json.loads(payload)
        if data.get("s") != self._scope(path, filters, tenant):
            raise bad_token()
        return data["a"]


def check_per_page(per_page: int | None) -> int:
    if per_page is None:
        return DEFAULT_PER_PAGE
    if not 1 <= per_page <= MAX_PER_PAGE:
        raise DomainError(
            "invalid_request", "per_page must be between 1 and 100.", field="per_page"
        )
    return per_page


def page_response(
    *,
    items: list[Any],
    per_page: int,
    path: str,
    filters: Mapping[str, Any],
    next_token: str | None,
    origin: str = "",
) -> dict[str, Any]:
    """`origin` (scheme and host the client called) makes the links absolute, so that a client
    can follow `links.next` as given whatever base URL it joins relative paths to."""
    query = {k: v for k, v in filters.items() if v is not None}
    query["per_page"] = per_page
    first = f"{origin}{path}?{urlencode(query)}"
    next_link = (
        f"{origin}{path}?{urlencode({**query, 'page_token': next_token})}" if next_token else None
    )
    return {
        "data": items,
        "links": {"first": first, "next": next_link},
        "meta": {"path": path, "per_page": per_page, "returned": len(items)},
    }
