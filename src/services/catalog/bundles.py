"""Bundles: save, edit, archive order templates; the loader orders use for `bundle_id`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from domain.bundles import Bundle
from domain.errors import DomainError, NotFound, invalid
from infra.idempotency import created_before
from infra.ids import parse_id
from services.accounts.keys import Principal
from services.catalog.commands import MAX_NAME, CreateBundle, UpdateBundle
from services.catalog.sizing import Sizing, size_bundle
from views.bundles import BundleOut, bundle_view

if TYPE_CHECKING:
    from runtime.container import Container


def load_bundle(container: Container, org_id: str, environment: str, bundle_id: str) -> Bundle:
    """This tenant's bundle, or 404 not_found (another organization's or environment's too)."""
    found = container.store.find(parse_id("bun", bundle_id), Bundle)
    if not isinstance(found, Bundle) or not found.owned_by(org_id, environment):
        raise NotFound("bundle", field="bundle_id")
    return found


def get_bundle(container: Container, principal: Principal, bundle_id: str) -> BundleOut:
    return bundle_view(load_bundle(container, principal.org_id, principal.environment, bundle_id))


def _checked_terms(terms: CreateBundle) -> tuple[CreateBundle, Sizing]:
    """The terms with their name trimmed, and their sizing (both as the events store them)."""
    name = terms.name.strip()
    if not name or len(name) > MAX_NAME:
        raise invalid(f"name must be 1 to {MAX_NAME} characters.", "name")
    clean = msgspec.structs.replace(terms, name=name)
    sizing = size_bundle(
        monthly_sending_volume=clean.monthly_sending_volume,
        send_on_weekends=clean.send_on_weekends,
        suite_a_percent=clean.suite_a_percent,
        suite_b_percent=clean.suite_b_percent,
        suite_a_licenses=clean.suite_a_licenses,
    )
    return clean, sizing


def create_bundle(container: Container, principal: Principal, command: CreateBundle) -> BundleOut:
    if (earlier := created_before(container, "bundle", Bundle)) is not None:
        return bundle_view(earlier)  # saved by this request's first attempt, which died
    clean, sizing = _checked_terms(command)
    bundle = Bundle(
        org_id=principal.org_id,
        environment=principal.environment,
        terms=msgspec.structs.asdict(clean),
        sizing=sizing,
        created_at=container.clock.now(),
    )
    container.unit_of_work.save(bundle)
    return bundle_view(bundle)


def update_bundle(
    container: Container, principal: Principal, bundle_id: str, command: UpdateBundle
) -> BundleOut:
    """Only the properties sent change; a null percent or license count goes back to the
    sizing rule's value."""
    changes = command.changes()

    def attempt() -> BundleOut:
        bundle = load_bundle(container, principal.org_id, principal.environment, bundle_id)
        if not bundle.is_active:
            raise DomainError(
                "bundle_archived", "An archived bundle cannot be edited.", field="bundle_id"
            )
        if changes:
            current = msgspec.convert(bundle.terms(), CreateBundle)
            clean, sizing = _checked_terms(msgspec.structs.replace(current, **changes))
            bundle.edit(msgspec.structs.asdict(clean), sizing, container.clock.now())
            container.unit_of_work.save(bundle)
        return bundle_view(bundle)

    return container.unit_of_work.retrying(attempt)


def archive_bundle(container: Container, principal: Principal, bundle_id: str) -> BundleOut:
    def attempt() -> BundleOut:
        bundle = load_bundle(container, principal.org_id, principal.environment, bundle_id)
        bundle.archive(container.clock.now())
        container.unit_of_work.save(bundle)
        return bundle_view(bundle)

    return container.unit_of_work.retrying(attempt)
