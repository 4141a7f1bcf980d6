"""How a bundle looks in responses and lists: one shape, built from the aggregate or from its
events' terms and sizing (spec 2.2; a list row names `suite_a_licenses` differently)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

import msgspec

from domain.bundles import Bundle
from infra.clock import iso
from infra.ids import public_id
from schema.vocabulary import BundleStatus
from views.pages import Links, Meta


class Split(msgspec.Struct):
    suite_a_percent: int
    suite_b_percent: int


class SuiteCounts(msgspec.Struct):
    suite_a: int
    suite_b: int
    total: int


class _BundleCommon(msgspec.Struct, kw_only=True):
    id: str
    name: str
    monthly_sending_volume: int
    suite_a_percent: int | None
    suite_b_percent: int | None
    send_on_weekends: bool
    suite_b_inboxes_per_domain: int
    status: BundleStatus
    effective: Split
    inboxes: Annotated[
        SuiteCounts,
        msgspec.Meta(
            description="The inboxes the sending volume needs per suite (the sizing rule). An "
            "order of the bundle fills each required domain with its inboxes per domain, so it "
            "delivers and bills required_domains x inboxes per domain licenses, which can be a "
            "few more."
        ),
    ]
    required_domains: SuiteCounts
    created_at: str
    updated_at: str


class BundleOut(_BundleCommon, kw_only=True):
    suite_a_licenses: int


class BundleListItem(_BundleCommon, kw_only=True):
    suite_a_inboxes_per_domain: int


class BundleResponse(msgspec.Struct):
    data: BundleOut


class BundlePage(msgspec.Struct):
    data: list[BundleListItem]
    links: Links
    meta: Meta


def sized_bundle(
    *,
    bundle_id: str,
    terms: Mapping[str, Any],
    sizing: Mapping[str, Any],
    status: str,
    created_at: float,
    updated_at: float,
) -> BundleOut:
    """The single-bundle shape from what the bundle's events carry: the partner's terms and
    the sizing computed from them (`services.catalog.sizing`)."""
    return BundleOut(
        id=bundle_id,
        name=terms["name"],
        monthly_sending_volume=terms["monthly_sending_volume"],
        suite_a_percent=terms["suite_a_percent"],
        suite_b_percent=terms["suite_b_percent"],
        send_on_weekends=terms["send_on_weekends"],
        suite_b_inboxes_per_domain=sizing["suite_b_inboxes_per_domain"],
        status=msgspec.convert(status, BundleStatus),
        effective=msgspec.convert(sizing["effective"], Split),
        inboxes=msgspec.convert(sizing["inboxes"], SuiteCounts),
        required_domains=msgspec.convert(sizing["required_domains"], SuiteCounts),
        created_at=iso(created_at),
        updated_at=iso(updated_at),
        suite_a_licenses=sizing["suite_a_inboxes_per_domain"],
    )


def bundle_view(bundle: Bundle) -> BundleOut:
    """The single-bundle shape (spec 2.2); lists rename `suite_a_licenses`, see list_item."""
    sizing = {
        "effective": bundle.effective,
        "suite_a_inboxes_per_domain": bundle.suite_a_licenses,
        "suite_b_inboxes_per_domain": bundle.suite_b_inboxes_per_domain,
        "inboxes": bundle.inboxes,
        "required_domains": bundle.required_domains,
    }
    return sized_bundle(
        bundle_id=public_id("bun", bundle.id),
        terms=bundle.terms(),
        sizing=sizing,
        status=bundle.status,
        created_at=bundle.created_at,
        updated_at=bundle.updated_at,
    )


def list_item(single: BundleOut) -> BundleListItem:
    """Spec 2.2: the list carries the single response's `suite_a_licenses` as
    `suite_a_inboxes_per_domain`."""
    fields = msgspec.structs.asdict(single)
    fields["suite_a_inboxes_per_domain"] = fields.pop("suite_a_licenses")
    return BundleListItem(**fields)
