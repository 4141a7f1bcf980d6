"""Rules a body's checks enforce, written into the OpenAPI document by the Structs that carry
them (commands and views).

Documentation only (`extra_json_schema`): the services check these rules themselves, to answer
the spec-7 envelope with their own message and `field`; msgspec does not enforce them. Keeping
them in the schema means a body valid against the published document is one the service takes,
as far as JSON Schema can say it (not, say, whether a TLD is in the catalog, or two names
that differ only in case).
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec


def documented(**schema: Any) -> msgspec.Meta:
    """`Annotated[str, documented(min_length=1)]`: Litestar's schema field names, snake case.
    The bodies decoded by hand are rendered by msgspec instead, which copies `extra` as it is:
    `openapi_docs.lift_extra` turns it into JSON Schema there."""
    return msgspec.Meta(extra_json_schema={"extra": schema})


# Something besides white space (a name, a domain), and no NUL: a string with a pattern of its
# own does not get `openapi_docs.NO_NUL`, so this one says both.
TEXT = r"^[^\u0000]*[^\s\u0000][^\u0000]*$"
NonEmpty = Annotated[str, documented(min_length=1, pattern=TEXT)]
# Litestar drops the metadata of a list's item type: a list states its items' rule itself,
# `documented(items=NON_EMPTY_ITEM)`, in JSON Schema's own words.
NON_EMPTY_ITEM = {"type": "string", "minLength": 1, "pattern": TEXT}
# An absolute URL with a host (`https://` alone is refused); `iri`: a host may be an
# internationalized name, checked in its IDNA form.
HttpsUrl = Annotated[str, documented(pattern=r"^https://[^\s/?#]+", format="iri")]
HttpUrl = Annotated[
    str, documented(pattern=r"^https?://[^\s/?#]+", format="iri", max_length=2048)
]
