"""What partners ask of their sandbox clock, as the gateway decodes it."""

from __future__ import annotations

from typing import Annotated

import msgspec

from domain.sandbox_clocks import MAX_ADVANCE_SECONDS
from schema.rules import documented


class AdvanceSandboxClock(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """`POST /sandbox/clock/advance`: `seconds` or `to`, exactly one of them."""

    # Documentation only: the use case checks the bounds itself, to answer with `field`.
    seconds: Annotated[int | None, documented(minimum=1, maximum=MAX_ADVANCE_SECONDS)] = None
    to: str | None = None  # ISO 8601
