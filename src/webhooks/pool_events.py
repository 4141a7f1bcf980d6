"""Public `pool.*` events (spec 6: the pool family; names decided here).

| type | fired when | `data` |
| --- | --- | --- |
| `pool.domain_added` | `POST /pool/add` put a domain in the pool (`warming`) | the pool domain |
| `pool.domain_removed` | `POST /pool/remove` took it out | the pool domain |
| `pool.domain_burned` | a burned-domain job recorded a burned result on it | the pool domain, `job_id`, `reason` |
| `pool.domain_retired` | a replacement took a burned assigned domain out | the pool domain, `replacement_id` |
| `pool.attach_in_progress` | `POST /pool/attach` reserved the domains | the `pcl_` reservation |
| `pool.attach_completed` | the reserved domains are assigned | the `pcl_` reservation |
| `pool.attach_failed` | the reservation could not finish; domains back in the pool | the `pcl_` reservation |
| `pool.release_in_progress` | `POST /pool/release` accepted | the `prl_` release |
| `pool.release_completed` | the domains rest `idle_quarantined` | the `prl_` release |
| `pool.replacement_completed` | a burned assigned domain was replaced | the `prp_` replacement |
| `pool.replacement_failed` | no available domain to replace it | the `prp_` replacement |
| `domain.action_required` | with `pool.replacement_failed`: the burned domain needs one | the domain, `reason` `replacement_needed` |
| `domain.connected` | a replacement or a release ended that need | the domain, `status` `active` |
| `pool.burned_domain_job_completed` | a `brj_` job finished | the `brj_` job |

The pool domain is shown as `GET /pool/domains` shows it at the moment of the event, plus
`status` (its condition): receivers decide from `data.status` (spec 6, delivery rule 3).
"""

# This docstring is part of the OpenAPI description of `POST /pool/attach`. Each `data` is the
# `views/pool.py` view the REST API answers for it (`PoolDomainOut`, `ReservationOut`,
# `ReleaseOut`, `ReplacementOut`, `BurnedJobOut`), as plain JSON.

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from eventsourcing.domain import DomainEvent

from domain.burned_domain_jobs import BurnedDomainJob
from domain.pool_domains import REMOVED, PoolDomain
from domain.pool_releases import PoolRelease
from domain.pool_replacements import PoolReplacement
from domain.pool_reservations import PoolReservation
from infra.ids import public_id
from infra.store import EventStore
from projections.domains import REPLACEMENT_NEEDED
from views.pool import (
    burned_job_out,
    pool_domain_view,
    release_view,
    replacement_view,
    reservation_view,
)
from webhooks.public_events import PublicEvent, event_about, maps

_DOMAIN_TYPES = {
    PoolDomain.Added: "pool.domain_added",
    PoolDomain.Removed: "pool.domain_removed",
    PoolDomain.Burned: "pool.domain_burned",
    PoolDomain.Retired: "pool.domain_retired",
    PoolDomain.Lapsed: "pool.domain_removed",  # gone with its registration
}
_JOB_TYPES: dict[type[DomainEvent], tuple[str, str, Callable[[Any], msgspec.Struct]]] = {
    PoolReservation.Requested: ("pool.attach_in_progress", "pcl", reservation_view),
    PoolReservation.Completed: ("pool.attach_completed", "pcl", reservation_view),
    PoolReservation.Failed: ("pool.attach_failed", "pcl", reservation_view),
    PoolRelease.Requested: ("pool.release_in_progress", "prl", release_view),
    PoolRelease.Completed: ("pool.release_completed", "prl", release_view),
    BurnedDomainJob.Completed: ("pool.burned_domain_job_completed", "brj", burned_job_out),
}


def _at(event: Any, store: EventStore) -> Any:
    return store.repository.get(event.originator_id, version=event.originator_version)


@maps(*_DOMAIN_TYPES)
def pool_domain_moved(event: Any, store: EventStore) -> list[PublicEvent]:
    domain: PoolDomain = _at(event, store)
    kind = type(event)
    extra: dict[str, Any] = {}
    if kind is PoolDomain.Burned:
        extra = {"job_id": event.job_id, "reason": event.reason}
    if kind is PoolDomain.Retired:
        extra = {"replacement_id": event.replacement_id}
    return [_pool_domain_event(domain, _DOMAIN_TYPES[kind], event.at, extra)]


def _pool_domain_event(
    domain: PoolDomain, type_: str, at: float, extra: dict[str, Any] | None = None
) -> PublicEvent:
    """A `pool.domain_*` event: the pool domain as `GET /pool/domains` shows it."""
    data: dict[str, Any] = msgspec.to_builtins(pool_domain_view(domain, at))
    data["status"] = data["condition"]
    data.update(extra or {})
    return event_about(domain, type_, domain.dom_id or public_id("dom", domain.id), data, at)


@maps(*_JOB_TYPES)
def pool_job_moved(event: Any, store: EventStore) -> list[PublicEvent]:
    kind, prefix, view = _JOB_TYPES[type(event)]
    job = _at(event, store)
    return [
        event_about(job, kind, public_id(prefix, job.id), msgspec.to_builtins(view(job)), event.at)
    ]


@maps(PoolReplacement.Finished)
def replacement_finished(event: Any, store: EventStore) -> list[PublicEvent]:
    replacement = _at(event, store)
    kind = f"pool.replacement_{replacement.status}"
    events = [
        event_about(
            replacement,
            kind,
            public_id("prp", replacement.id),
            msgspec.to_builtins(replacement_view(replacement)),
            event.at,
        )
    ]
    burned = replacement.burned_domain
    link = {"replacement_id": public_id("prp", replacement.id)}
    if replacement.status == "failed":
        # Spec 6: `domain.action_required` when a domain needs a replacement.
        events.append(_burned_domain_event(replacement, burned, REPLACEMENT_NEEDED, link, event.at))
    elif replacement.ends_replacement_needed:
        events.append(_burned_domain_event(replacement, burned, None, link, event.at))
    return events


def _burned_domain_event(
    owner: Any, domain: dict[str, str], reason: str | None, link: dict[str, Any], at: float
) -> PublicEvent:
    """A burned pool domain's move to `action_required` (it needs a replacement) or, `reason`
    None, back to `active` (spec 3: `domain.connected` accompanies it)."""
    data = {
        "id": domain["id"],
        "domain": domain["domain"],
        "status": "action_required" if reason else "active",
        "reason": reason,
        **link,
        "workspace_id": owner.workspace_id,
    }
    kind = "domain.action_required" if reason else "domain.connected"
    return event_about(owner, kind, domain["id"], data, at)


@maps(PoolDomain.Released)
def burned_domain_released(event: Any, store: EventStore) -> list[PublicEvent]:
    """Releasing a burned domain whose replacement failed ends its `replacement_needed`
    (spec 3: `domain.connected` accompanies the move back to `active`); a burned domain
    released leaves the pool (`pool.domain_removed`)."""
    domain: PoolDomain = store.repository.get(
        event.originator_id, version=event.originator_version - 1
    )
    events = _left_the_pool(event, store)
    if not domain.released_awaiting_replacement or not domain.dom_id:
        return events
    named = {"id": domain.dom_id, "domain": domain.name}
    link = {"release_id": domain.release_id}
    return [_burned_domain_event(domain, named, None, link, event.at), *events]


@maps(PoolDomain.Unreserved)
def burned_domain_unreserved(event: Any, store: EventStore) -> list[PublicEvent]:
    """A burned domain a failed attach gives back leaves the pool instead."""
    return _left_the_pool(event, store)


def _left_the_pool(event: Any, store: EventStore) -> list[PublicEvent]:
    """`pool.domain_removed` when the move took a (burned) domain out of the pool, as the
    other ways out say it: a receiver that mirrors the pool from `pool.*` events would
    otherwise keep it idle or available."""
    domain: PoolDomain = _at(event, store)
    if domain.condition != REMOVED:
        return []
    return [_pool_domain_event(domain, "pool.domain_removed", event.at)]
