"""The page envelope every list answers: `data`, `links`, `meta` (spec 7, decisions.md 3)."""

from __future__ import annotations

from typing import Annotated

import msgspec


class Links(msgspec.Struct):
    first: Annotated[str, msgspec.Meta(description="Absolute URL of the first page, same filters")]
    next: Annotated[
        str | None,
        msgspec.Meta(
            description="Absolute URL of the next page (carries `page_token`); null on "
            "the last page. Follow it as given."
        ),
    ]


class Meta(msgspec.Struct):
    path: str
    per_page: int
    returned: int
