"""What partners ask of the pool, as the gateway (`gateway/rest/pool.py`) decodes it.

| command | route | use case |
| --- | --- | --- |
| `AddPoolDomains` | `POST /pool/add` | `services/pool/inventory.add_domains` |
| `RemovePoolDomains` | `POST /pool/remove` | `services/pool/inventory.remove_domains` |
| `AttachPool` | `POST /pool/attach` | `services/pool/attach.attach` (events: `domain/pool_reservations.py`) |
| `ReleasePool` | `POST /pool/release` | `services/pool/attach.release` (events: `domain/pool_releases.py`) |

The bounds are documented here for the OpenAPI document; the use cases check them themselves,
to answer the spec-7 envelope with their own message and `field` (msgspec does not enforce
`documented` rules).
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from schema.rules import NON_EMPTY_ITEM, documented

MAX_DOMAINS = 25  # names in one add, remove or release
MAX_QUANTITY = 100  # domains in one attach

PoolDomainNames = Annotated[
    list[str],
    documented(min_items=1, max_items=MAX_DOMAINS, unique_items=True, items=NON_EMPTY_ITEM),
]


class AddPoolDomains(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """`POST /pool/add`: eligible domains of the caller's inventory, all or nothing."""

    domains: PoolDomainNames


class RemovePoolDomains(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """`POST /pool/remove`: exact domains out of the active pool inventory."""

    domains: PoolDomainNames


class AttachPool(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """`POST /pool/attach`: reserve exactly `quantity` available pool domains for a workspace."""

    workspace_id: str
    # No `maximum` in the document: a quantity the pool cannot fill is 409
    # `insufficient_inventory` however large (spec 4.2); the cap applies only to one it could.
    quantity: Annotated[
        int,
        documented(minimum=1),
        msgspec.Meta(
            description=f"1 or more; at most {MAX_QUANTITY} in one reservation. More than the "
            "pool holds now: 409 `insufficient_inventory`, nothing reserved."
        ),
    ]
    client_id: int | None = None  # kind m workspaces only


class ReleasePool(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """`POST /pool/release`: assigned pool domains given back to the pool."""

    domains: PoolDomainNames
