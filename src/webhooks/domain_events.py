"""Public `domain.*` and `domain_import.*` events from Domain, ImportJob and ForwardingJob.

`domain.connected` / `domain.action_required` carry the domain row as `GET /domains/{id}`
shows it (a renewal the wallet could not cover: `id`, `domain`, `status`, `reason`
`renewal_payment_failed`, `auto_renew`, `renewal_price_cents`, `retry_at`); `domain_import.*` the import job as `GET /domains/import/jobs/{id}` shows it;
`domain.forwarding_updated` / `domain.forwarding_failed` one event per domain with `id`,
`domain`, `forwarding_url`, `job_id`, `status` (the domain's own status, which forwarding does
not change), `forwarding_status` (the change's outcome: `completed` or `failed`) and `reason`
on failure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from domain.domain_terms import PAYMENT_FAILED, DomainTerm
from domain.domains import Domain
from domain.forwarding import ForwardingJob
from domain.imports import ACTION_REQUIRED, COMPLETED, FAILED, ImportJob
from infra.clock import iso
from infra.ids import public_id
from infra.store import EventStore
from views.domains import ForwardingEventData, RenewalUnpaidData, aggregate_view
from views.jobs import import_view
from webhooks.public_events import PublicEvent, event_about, maps


def _at(event: Any, store: EventStore) -> Any:
    return store.repository.get(event.originator_id, version=event.originator_version)


@maps(Domain.Connected, Domain.ActionRequired)
def domain_moved(event: Any, store: EventStore) -> list[PublicEvent]:
    domain: Domain = _at(event, store)
    kind = "domain.connected" if domain.status == "active" else "domain.action_required"
    return [
        event_about(
            domain,
            kind,
            public_id("dom", domain.id),
            msgspec.to_builtins(aggregate_view(domain)),
            event.at,
        )
    ]


@maps(DomainTerm.RenewalPaymentFailed)
def renewal_unpaid(event: Any, store: EventStore) -> list[PublicEvent]:
    """A live renewal the wallet could not cover: the domain needs the partner (a credit)."""
    term: DomainTerm = _at(event, store)
    data = RenewalUnpaidData(
        id=term.dom_id,
        domain=term.name,
        status="action_required",
        reason=PAYMENT_FAILED,
        auto_renew=term.auto_renew,
        renewal_price_cents=event.required_cents,
        retry_at=iso(term.retry_at) if term.retry_at is not None else None,
    )
    return [
        event_about(
            term, "domain.action_required", term.dom_id, msgspec.to_builtins(data), event.at
        )
    ]


_IMPORT_TYPES = {
    COMPLETED: "domain_import.completed",
    FAILED: "domain_import.failed",
    ACTION_REQUIRED: "domain_import.action_required",
}


@maps(ImportJob.Progressed)
def import_moved(event: Any, store: EventStore) -> list[PublicEvent]:
    if event.status == event.previous or event.status not in _IMPORT_TYPES:
        return []
    job: ImportJob = _at(event, store)
    return [
        event_about(
            job,
            _IMPORT_TYPES[event.status],
            public_id("imp", job.id),
            msgspec.to_builtins(import_view(job)),
            event.at,
        )
    ]


@maps(ForwardingJob.Finished)
def forwarding_finished(event: Any, store: EventStore) -> list[PublicEvent]:
    job: ForwardingJob = _at(event, store)
    job_id = public_id("fwj", job.id)
    if job.status == "completed":
        kind, items = "domain.forwarding_updated", job.applied
    else:
        kind, items = "domain.forwarding_failed", job.failed
    events = []
    for item in items:
        # Receivers decide from `data.status` (spec 6) per resource: this is a `dom_` id, so
        # the domain's status; jobs saved before it was recorded give the outcome.
        status = (job.domain_statuses or {}).get(item["id"], job.status)
        data = forwarding_data(item, job.forwarding_url, status, job.status, job.reason,
                               job_id=job_id)
        events.append(event_about(job, kind, item["id"], data, event.at))
    return events


def forwarding_data(
    item: Mapping[str, Any],  # an order's DomainItem or a forwarding job's item
    url: str,
    status: str,
    outcome: str,
    reason: str | None,
    *,
    job_id: str | None = None,
    order_id: str | None = None,
) -> dict[str, Any]:
    """`data` of `domain.forwarding_updated` / `domain.forwarding_failed` for one domain: a
    forwarding job's (`job_id`), or an order's whose target was refused (`order_id`)."""
    data = ForwardingEventData(
        id=item["id"],
        domain=item["domain"],
        forwarding_url=url,
        job_id=job_id,
        order_id=msgspec.UNSET if order_id is None else order_id,
        status=status,
        forwarding_status=outcome,
        reason=reason or msgspec.UNSET,
    )
    built: dict[str, Any] = msgspec.to_builtins(data)
    return built
