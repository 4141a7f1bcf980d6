"""Baseline: a bare Litestar app whose one handler returns the same JSON as GET /me."""

from __future__ import annotations

from typing import Any

from litestar import Litestar, get

BODY = {
    "data": {
        "api_key": {"environment": "test", "permission_preset": "full"},
        "partner": {"id": "org_00000000000000000000000000000000", "name": "Bench"},
    }
}


@get("/partner/v1/me")
async def me() -> dict[str, Any]:
    return BODY


app = Litestar(route_handlers=[me])
