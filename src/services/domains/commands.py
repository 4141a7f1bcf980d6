"""What partners ask of their domains, as the gateway decodes it.

Documentation only (`documented`, `extra_json_schema`): the services check these bounds
themselves, to answer the spec-7 envelope with their own message and `field`; msgspec does not
enforce them.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from schema.rules import NON_EMPTY_ITEM, HttpUrl, NonEmpty, documented

MAX_AVAILABILITY = 50
MAX_SYNC_IMPORT = 50
MAX_IMPORT_JOB = 500
MAX_FORWARDING = 50
MAX_KEYWORDS = 10
MAX_AFFIXES = 50
MAX_LIMIT = 150
# Letters, digits and hyphens, either case (the service lowers them).
# Letters, digits and hyphens, 1 to 40; no hyphen where the part begins or ends a name.
KEYWORD = {"type": "string", "pattern": "^[A-Za-z0-9]([A-Za-z0-9-]{0,38}[A-Za-z0-9])?$"}
PREFIX = {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9-]{0,39}$"}
SUFFIX = {"type": "string", "pattern": "^[A-Za-z0-9-]{0,39}[A-Za-z0-9]$"}


def _names(least: int, most: int) -> msgspec.Meta:
    return documented(min_items=least, max_items=most, items=NON_EMPTY_ITEM)


class CheckAvailability(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """`POST /domains/availability`: 1 to 50 names."""

    domains: list[str]


class UpdateDomain(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """`PATCH /domains/{id}`: a bought domain's yearly renewal on or off."""

    # Required, but checked after the domain is found: a foreign id is 404 whatever the body.
    auto_renew: bool | msgspec.UnsetType = msgspec.UNSET


class GenerateDomains(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """`POST /domains/generate`."""

    keywords: Annotated[list[str], documented(min_items=1, max_items=MAX_KEYWORDS, items=KEYWORD)]
    # Both omitted: the service's own lists (`DEFAULT_PREFIXES`, `DEFAULT_SUFFIXES`).
    prefixes: Annotated[list[str] | None, documented(max_items=MAX_AFFIXES, items=PREFIX)] = None
    suffixes: Annotated[list[str] | None, documented(max_items=MAX_AFFIXES, items=SUFFIX)] = None
    tlds: Annotated[list[str] | None, documented(min_items=1)] = None  # omitted: `com` only
    limit: Annotated[int | None, documented(minimum=1, maximum=MAX_LIMIT)] = None  # default 75


class ImportDomains(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """`POST /domains/import`: up to 50 domains, imported now."""

    domains: Annotated[list[str], _names(1, MAX_SYNC_IMPORT)]
    workspace_id: str | None = None


class SubmitImportJob(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """`POST /domains/import/jobs`: as `ImportDomains`, with up to 500 domains, queued."""

    domains: Annotated[list[str], _names(1, MAX_IMPORT_JOB)]
    workspace_id: str | None = None


class SetForwarding(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """`POST /domains/forwarding`: one URL for up to 50 domains."""

    domains: Annotated[list[str], documented(min_items=1, max_items=MAX_FORWARDING)]
    forwarding_url: HttpUrl


class PurchaseItem(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    domain: NonEmpty
    auto_renew: bool = True


class PurchaseDomains(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """`POST /domains/purchase`: up to 50 domains bought as one order."""

    domains: list[PurchaseItem]
    workspace_id: str | None = None
