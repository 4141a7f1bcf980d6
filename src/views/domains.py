"""How a domain looks in responses, lists and webhooks (one shape), from its inventory row or
from the aggregate itself; availability rows, the TLD catalog and generated names."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, cast

import msgspec

from domain.domains import Domain, usable_for
from infra.clock import iso
from infra.ids import public_id
from schema.rules import documented
from schema.vocabulary import DomainStatus, Suite
from views.pages import Links, Meta

Category = Literal["inventory", "connected"]
Source = Literal["purchased", "imported", "ordered", "generated"]


# Why a name is not available (spec 2.5): someone holds it, the registry prices it as premium
# (not orderable), or it is not a name of the catalog's TLDs.
UnavailableReason = Annotated[str, documented(enum=["registered", "premium", "invalid"])]


class AvailabilityRow(msgspec.Struct, kw_only=True):
    """Spec 2.5; `reason` only when `available` is false."""

    domain: Annotated[str, msgspec.Meta(description=(
        "The name as the service reads it: trimmed, lower case, an internationalized name in "
        "its ASCII (punycode) form; a name that is not valid (`reason: invalid`) as sent. "
        "Rows come in the order the names were sent."
    ))]
    available: bool
    price_cents: int
    renewal_price_cents: int
    currency: str
    usable_for: list[Suite]
    owned: bool  # already in this account's inventory: ordering it registers nothing
    reason: UnavailableReason | msgspec.UnsetType = msgspec.UNSET


class AvailabilityRows(msgspec.Struct, kw_only=True):
    domains: list[AvailabilityRow]


class AvailabilityResponse(msgspec.Struct, kw_only=True):
    data: AvailabilityRows


class DomainOut(msgspec.Struct, kw_only=True):
    """A domain (`dom_`). `reason` only when there is one; the fields from `provider` on only
    on `connected` domains (on an active order)."""

    id: str
    domain: str
    status: DomainStatus
    category: Category
    source: Source
    auto_renew: bool
    forwarding_url: str | None
    dns_records: list[dict[str, Any]]
    created_at: str
    updated_at: str
    reason: str | msgspec.UnsetType = msgspec.UNSET
    provider: Suite | None | msgspec.UnsetType = msgspec.UNSET
    suite: Suite | None | msgspec.UnsetType = msgspec.UNSET
    customer_id: str | None | msgspec.UnsetType = msgspec.UNSET
    order_id: str | None | msgspec.UnsetType = msgspec.UNSET
    workspace_id: str | None | msgspec.UnsetType = msgspec.UNSET
    usable_for: list[Suite] | msgspec.UnsetType = msgspec.UNSET


class DomainResponse(msgspec.Struct):
    data: DomainOut


class DomainPage(msgspec.Struct):
    data: list[DomainOut]
    links: Links
    meta: Meta


class Tld(msgspec.Struct):
    tld: str  # without the dot: `com`
    name: str  # with the dot: `.com`


class TldPage(msgspec.Struct):
    data: list[Tld]
    links: Links
    meta: Meta


class TldGroup(msgspec.Struct):
    tld: str
    domains: list[str]  # available names under this TLD


class GeneratedOut(msgspec.Struct):
    """Names grouped by the TLDs asked for, in that order."""

    domains: list[TldGroup]
    returned: int  # names found, across groups
    candidates_examined: int
    partial: bool  # fewer than `limit` found before the time budget ran out


class GeneratedResponse(msgspec.Struct):
    data: GeneratedOut


class RenewalUnpaidData(msgspec.Struct, kw_only=True):
    """`data` of `domain.action_required` for a live renewal the wallet could not cover."""

    id: str
    domain: str
    status: Literal["action_required"]
    reason: str
    auto_renew: bool
    renewal_price_cents: int
    retry_at: str | None


class ForwardingEventData(msgspec.Struct, kw_only=True):
    """`data` of `domain.forwarding_updated` / `domain.forwarding_failed`, one domain's:
    `order_id` only for an order's refused target (after `job_id`, where the first order events
    stored it: replay compares the text), `reason` only on failure."""

    id: str
    domain: str
    forwarding_url: str
    job_id: str | None
    order_id: str | msgspec.UnsetType = msgspec.UNSET
    status: str
    forwarding_status: str
    reason: str | msgspec.UnsetType = msgspec.UNSET


def suites(names: list[str]) -> list[Suite]:
    """`usable_for` as the closed vocabulary (the domain's own list holds only its members)."""
    return cast(list[Suite], names)


def row_view(row: dict[str, Any], users: set[str]) -> DomainOut:
    """`reason` when there is one; where the domain is connected only on a `connected` row."""
    connected = row["category"] == "connected"
    unset = msgspec.UNSET
    return DomainOut(
        id=row["id"],
        domain=row["name"],
        status=row["status"],
        category=row["category"],
        source=row["source"],
        auto_renew=bool(row["auto_renew"]),
        forwarding_url=row["forwarding_url"],
        dns_records=json.loads(row["dns_records"]),
        created_at=iso(row["created_at"]),
        updated_at=iso(row["updated_at"]),
        reason=row["reason"] or unset,
        provider=row["provider"] if connected else unset,
        suite=row["suite"] if connected else unset,
        customer_id=row["customer_id"] if connected else unset,
        order_id=row["order_id"] if connected else unset,
        workspace_id=row["workspace_id"] if connected else unset,
        usable_for=suites(usable_for(users)) if connected else unset,
    )


def aggregate_view(domain: Domain, users: set[str] | None = None) -> DomainOut:
    """The row of a Domain built from the aggregate itself (webhooks, consistent reads)."""
    row = {
        "id": public_id("dom", domain.id),
        "name": domain.name,
        "status": domain.status,
        "category": domain.category,
        "source": domain.source,
        "auto_renew": domain.auto_renew,
        "forwarding_url": domain.forwarding_url,
        "dns_records": json.dumps(domain.dns_records),
        "created_at": domain.created_at,
        "updated_at": domain.updated_at,
        "reason": domain.reason,
        "provider": domain.provider,
        "suite": domain.suite,
        "customer_id": domain.customer_id,
        "order_id": domain.order_id,
        "workspace_id": domain.workspace_id,
    }
    fallback = {domain.suite} if domain.suite and domain.order_id else set()
    return row_view(row, users if users is not None else fallback)
