"""How `GET /me` answers: the key's environment and preset, and its organization."""

from __future__ import annotations

import msgspec

from schema.vocabulary import Environment, Preset


class ApiKeyInfo(msgspec.Struct):
    environment: Environment
    permission_preset: Preset


class PartnerInfo(msgspec.Struct):
    id: str
    name: str


class MeData(msgspec.Struct):
    api_key: ApiKeyInfo
    partner: PartnerInfo


class MeResponse(msgspec.Struct):
    data: MeData
