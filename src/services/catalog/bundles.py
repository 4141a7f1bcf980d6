"""Bundles: save, edit, archive order templates; the loader orders use for `bundle_id`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from domain.bundles import Bundle
from domain.errors import DomainError, NotFound, invalid
from infra.clock import iso
from infra.idempotency import created_before
from infra.ids import parse_id, public_id
from services.accounts.workspaces import on_conflict_retry
from services.catalog.sizing import size_bundle

if TYPE_CHECKING:
    from runtime.container import Container

MAX_NAME = 200
TERMS = (
    "name",
    "monthly_sending_volume",
    "send_on_weekends",
    "suite_a_percent",
    "suite_b_percent",
    "suite_a_licenses",
)


def load_bundle(container: Container, org_id: str, environment: str, bundle_id: str) -> Bundle:
    """This tenant's bundle, or 404 not_found (another organization's or environment's too)."""
    found = container.store.find(parse_id("bun", bundle_id), Bundle)
    if not isinstance(found, Bundle) or not found.owned_by(org_id, environment):
        raise NotFound("bundle", field="bundle_id")
    return found


def bundle_view(bundle: Bundle) -> dict[str, Any]:
    """The single-bundle shape (spec 2.2); lists rename `suite_a_licenses`, see list_view."""
    return {
        "id": public_id("bun", bundle.id),
        "name": bundle.name,
        "monthly_sending_volume": bundle.monthly_sending_volume,
        "suite_a_percent": bundle.suite_a_percent,
        "suite_b_percent": bundle.suite_b_percent,
        "send_on_weekends": bundle.send_on_weekends,
        "suite_a_licenses": bundle.suite_a_licenses,
        "suite_b_inboxes_per_domain": bundle.suite_b_inboxes_per_domain,
        "status": bundle.status,
        "effective": dict(bundle.effective),
        "inboxes": dict(bundle.inboxes),
        "required_domains": dict(bundle.required_domains),
        "created_at": iso(bundle.created_at),
        "updated_at": iso(bundle.updated_at),
    }


def list_view(single: dict[str, Any]) -> dict[str, Any]:
    """Spec 2.2: the list carries the single response's `suite_a_licenses` as
    `suite_a_inboxes_per_domain`."""
    row = {k: v for k, v in single.items() if k != "suite_a_licenses"}
    row["suite_a_inboxes_per_domain"] = single["suite_a_licenses"]
    return row


def _checked_terms(terms: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    name = terms["name"]
    if not isinstance(name, str) or not name.strip() or len(name.strip()) > MAX_NAME:
        raise invalid(f"name must be 1 to {MAX_NAME} characters.", "name")
    clean = {**terms, "name": name.strip()}
    sizing = size_bundle(
        monthly_sending_volume=clean["monthly_sending_volume"],
        send_on_weekends=clean["send_on_weekends"],
        suite_a_percent=clean["suite_a_percent"],
        suite_b_percent=clean["suite_b_percent"],
        suite_a_licenses=clean["suite_a_licenses"],
    )
    return clean, sizing


def create_bundle(
    container: Container, org_id: str, environment: str, terms: dict[str, Any]
) -> dict[str, Any]:
    if (earlier := created_before(container, "bundle", Bundle)) is not None:
        return bundle_view(earlier)  # saved by this request's first attempt, which died
    clean, sizing = _checked_terms({k: terms.get(k) for k in TERMS})
    bundle = Bundle(
        org_id=org_id,
        environment=environment,
        terms=clean,
        sizing=sizing,
        created_at=container.clock.now(),
    )
    container.unit_of_work.save(bundle)
    return bundle_view(bundle)


def edit_bundle(
    container: Container, org_id: str, environment: str, bundle_id: str, changes: dict[str, Any]
) -> dict[str, Any]:
    """`changes` holds only the properties sent; a null percent or license count goes back to
    the sizing rule's value."""
    unknown = set(changes) - set(TERMS)
    if unknown:
        raise invalid("Unknown property.", sorted(unknown)[0])
    for key in ("name", "monthly_sending_volume", "send_on_weekends"):
        if key in changes and changes[key] is None:
            raise invalid(f"{key} cannot be null.", key)

    def attempt() -> dict[str, Any]:
        bundle = load_bundle(container, org_id, environment, bundle_id)
        if not bundle.is_active:
            raise DomainError(
                "bundle_archived", "An archived bundle cannot be edited.", field="bundle_id"
            )
        if changes:
            clean, sizing = _checked_terms({**bundle.terms(), **changes})
            bundle.edit(clean, sizing, container.clock.now())
            container.unit_of_work.save(bundle)
        return bundle_view(bundle)

    return on_conflict_retry(attempt)


def archive_bundle(container: Container, org_id: str, environment: str, bundle_id: str) -> dict[str, Any]:
    def attempt() -> dict[str, Any]:
        bundle = load_bundle(container, org_id, environment, bundle_id)
        bundle.archive(container.clock.now())
        container.unit_of_work.save(bundle)
        return bundle_view(bundle)

    return on_conflict_retry(attempt)

