"""What partners ask of their account's resources, as the gateway decodes it."""

from __future__ import annotations

from typing import Annotated

import msgspec

from domain.workspaces import PROVIDERS
from schema.rules import TEXT, NonEmpty, documented
from schema.vocabulary import Environment

# The email rule and the length limit of names the services check (`services.accounts`
# workspaces and users import them from here), written into the document by the commands.
# Control characters spelled out: Python's `\s` covers \x1c-\x1f and \x85, JSON Schema's not.
_EMAIL_PART = r"[^@\s\x00-\x1f\x7f-\x9f]+"
EMAIL_PATTERN = rf"^{_EMAIL_PART}@{_EMAIL_PART}\.{_EMAIL_PART}$"
MAX_TEXT = 200
# A provider's key, token or password: generous, but a bound (they are stored and sent on).
MAX_CREDENTIAL = 1000
MAX_CREDIT_CENTS = 10**12

# `credentials` and `customer` are plain objects checked by the service: which properties are
# allowed depends on the provider kind, and each violation names its full path
# (`credentials.label`), which a nested Struct's decode error would not.
CREDENTIALS_DOC = (
    "Kind u and i: `api_key`. Kind m: `api_key`, `label`, optionally `email` and `password` "
    "together. Kind w: `api_key`, `workspace_id` (remote), `email`, `password`."
)
JsonObject = dict[str, object]


def _closed_object(description: str, max_length: int, *names: str) -> msgspec.Meta:
    """An optional object of these properties only (each a string, or null for absent)."""
    text = {
        "oneOf": [{"type": "string", "minLength": 1, "maxLength": max_length}, {"type": "null"}]
    }
    closed = {
        "type": "object",
        "properties": {name: text for name in names},
        "additionalProperties": False,
    }
    return msgspec.Meta(
        description=description, extra_json_schema={"extra": {"one_of": [closed, {"type": "null"}]}}
    )


Credentials = Annotated[
    JsonObject | None,
    _closed_object(
        CREDENTIALS_DOC, MAX_CREDENTIAL, "api_key", "workspace_id", "label", "email", "password"
    ),
]
Customer = Annotated[
    JsonObject | None,
    _closed_object(
        "Optional customer tracking: `external_id`, `name`, `email`.", MAX_TEXT,
        "external_id", "name", "email",
    ),
]


# Trimmed by the service before the length check; white space alone is refused.
WorkspaceName = Annotated[str, documented(min_length=1, max_length=MAX_TEXT, pattern=TEXT)]


class CreateWorkspace(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """`POST /workspaces`: connect a sequencing provider's workspace."""

    provider: Annotated[str, documented(enum=list(PROVIDERS))]
    name: WorkspaceName | None = None
    credentials: Credentials = None
    customer: Customer = None


class UpdateWorkspace(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """`PATCH /workspaces/{id}`: rename it or replace its credentials."""

    # Accepted only as the workspace's own kind: a kind never changes (409 provider_mismatch).
    # null (the default) is accepted, so the enum lists it: on the union it would refuse it.
    provider: Annotated[str | None, documented(enum=[*PROVIDERS, None])] = None
    name: WorkspaceName | None = None
    credentials: Credentials = None


class CreateUser(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """`POST /users`: a client account inside a kind m workspace."""

    workspace_id: str
    email: Annotated[str, documented(pattern=EMAIL_PATTERN, max_length=MAX_TEXT)]
    first_name: Annotated[NonEmpty, documented(max_length=MAX_TEXT)]
    last_name: Annotated[NonEmpty, documented(max_length=MAX_TEXT)]


class CreditWallet(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """An operator's credit to an organization's wallet (`partner-api wallet credit`, gRPC
    `AdminService.CreditWallet`): live, unless told otherwise (sandbox never bills)."""

    org_id: str
    amount_cents: int
    environment: Environment = "live"
