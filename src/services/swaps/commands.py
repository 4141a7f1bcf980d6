"""What partners ask of swaps, as the gateway decodes it."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from schema.rules import documented
from services.orders.commands import MAX_PERSONAS, Persona  # one `Persona` in the OpenAPI document


class CreateSwap(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """`POST /swaps`: replace `domain` on order `order_id`."""

    order_id: str
    domain: str
    type: Literal["standard", "premium"]
    new_domain: str | None = None


class RenameSwapUserNames(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """`POST /swaps/user_names`: new personas for the inboxes of a warm domain."""

    domain: str
    personas: Annotated[list[Persona], documented(min_items=1, max_items=MAX_PERSONAS)]
