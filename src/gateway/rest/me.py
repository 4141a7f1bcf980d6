"""GET /me: the cheapest key check (spec 4.1)."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Controller, Request, get

from gateway.rest.auth import principal_of


class ApiKeyInfo(msgspec.Struct):
    environment: str
    permission_preset: str


class PartnerInfo(msgspec.Struct):
    id: str
    name: str


class MeData(msgspec.Struct):
    api_key: ApiKeyInfo
    partner: PartnerInfo


class MeResponse(msgspec.Struct):
    data: MeData


class MeController(Controller):
    path = "/me"
    tags = ["account"]

    @get(operation_id="getMe", summary="Check the API key and see its organization")
    async def me(self, request: Request[Any, Any, Any]) -> MeResponse:
        principal = principal_of(request)
        return MeResponse(
            data=MeData(
                api_key=ApiKeyInfo(principal.environment, principal.preset),
                partner=PartnerInfo(principal.org_id, principal.org_name),
            )
        )
