"""What partners ask of their account's resources, as the gateway decodes it."""

from __future__ import annotations

from typing import Annotated

import msgspec

from schema.rules import NonEmpty, documented
from services.accounts.workspaces import EMAIL, MAX_TEXT


class CreateUser(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """`POST /users`: a client account inside a kind m workspace."""

    workspace_id: str
    email: Annotated[str, documented(pattern=EMAIL.pattern, max_length=MAX_TEXT)]
    first_name: Annotated[NonEmpty, documented(max_length=MAX_TEXT)]
    last_name: Annotated[NonEmpty, documented(max_length=MAX_TEXT)]
