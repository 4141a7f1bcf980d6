"""What partners ask of orders, as the gateway decodes it: place one (or price it, `POST
/quotes`, the same body) and resolve a pending action.

The nested Structs keep the names the OpenAPI document gives them (`Destination` and
`SuiteCounts` are documented as `DestinationInput` and `SuiteCountsInput`: the answered shapes
own the plain names)."""

from __future__ import annotations

from typing import Annotated

import msgspec

from schema.rules import TEXT, HttpsUrl, HttpUrl, documented
from schema.vocabulary import Suite

# A persona's names make the local part `first.last` of an address, which RFC 5321 holds to
# 64 characters: two names, the dot and a number for a repeated persona stay within it.
MAX_NAME_LENGTH = 30
MAX_PERSONAS = 50
PersonaName = Annotated[str, documented(min_length=1, max_length=MAX_NAME_LENGTH, pattern=TEXT)]


class Destination(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    workspace_id: str
    client_id: int | None = None
    # Kind i only: the sequencer login for this order; never returned.
    email: str | None = None
    password: str | None = None


MAX_DOMAINS_PER_SUITE = 100
MAX_INBOXES_PER_DOMAIN = 50


class SuiteCounts(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    domains: Annotated[int, documented(minimum=0, maximum=MAX_DOMAINS_PER_SUITE)]
    inboxes_per_domain: Annotated[int, documented(minimum=1, maximum=MAX_INBOXES_PER_DOMAIN)]


class NamedDomain(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    domain: str
    suite: Suite


class Persona(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    first_name: PersonaName
    last_name: PersonaName


class PlaceOrder(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """`POST /orders` (and `POST /quotes`, which prices it): domains and licenses for one
    customer, routed to a workspace."""

    destination: Destination
    bundle_id: str | None = None
    suite_a: SuiteCounts | None = None
    suite_b: SuiteCounts | None = None
    domains: list[NamedDomain] | None = None
    personas: Annotated[
        list[Persona],
        documented(
            max_items=MAX_PERSONAS,
            description="The mailbox names: each domain's inboxes take them in turn from the "
            "first (a domain with more inboxes than personas starts over, numbering repeated "
            "addresses; personas beyond a domain's inbox count are not used). Omitted: names "
            "the service chooses.",
        ),
    ] | None = None
    profile_picture_url: str | None = None
    forwarding_url: HttpUrl | None = None


class ResolvePendingAction(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """`POST /orders/pending/{id}/resolve`: the replacement picture (kind
    `profile_picture_url`), or nothing (kind `nameservers`: they are set now)."""

    profile_picture_url: HttpsUrl | None = None
