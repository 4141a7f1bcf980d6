"""How pool domains and pool jobs look in responses, lists and webhooks (one shape each).

The Structs here are the only definition of each shape: the use cases (`services/pool/`:
`inventory.py` add/remove, `attach.py` attach/release, `replacements.py`), the read model
(`projections/pool.py`) and the webhook mapper (`webhooks/pool_events.py`) build them, and the
routes (`gateway/rest/pool.py`) declare them, so the OpenAPI document describes what is sent.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from domain.burned_domain_jobs import BurnedDomainJob
from domain.pool_domains import CONDITIONS, PoolDomain
from domain.pool_releases import PoolRelease
from domain.pool_replacements import PoolReplacement
from domain.pool_reservations import PoolReservation
from infra.clock import iso
from infra.ids import public_id
from schema.rules import documented
from views.pages import Links, Meta

Count = Annotated[int, msgspec.Meta(ge=0)]

# Every condition of a pool record. Responses show only the six of `CONDITIONS` (a domain out
# of the pool is not listed); the read model's stored row and the `pool.domain_removed`
# webhook also say `not_pooled` / `removed`, so the document names the six the API answers.
PoolCondition = Literal[
    "not_pooled",
    "warming",
    "available",
    "idle_quarantined",
    "reserved",
    "assigned",
    "releasing",
    "removed",
]
Condition = Annotated[PoolCondition, documented(enum=list(CONDITIONS))]
ReservationStatus = Literal["in_progress", "completed", "failed"]
ReleaseStatus = Literal["in_progress", "completed"]
ReplacementStatus = Literal["completed", "failed"]
BurnedJobStatus = Literal["in_progress", "completed"]


class PoolDomainOut(msgspec.Struct, kw_only=True):
    """A pool domain; `available_at` is when warming or quarantine ends (null once available)."""

    id: str | None  # the domain's dom_ id
    domain: str
    condition: Condition
    available_at: str | None
    order_id: str | None
    inbox_count: Count
    reservation_id: str | None
    workspace_id: str | None
    client_id: int | None
    burned: bool
    added_at: str | None
    updated_at: str | None


class PoolDomainPage(msgspec.Struct):
    data: list[PoolDomainOut]
    links: Links
    meta: Meta


class PoolAddOutcome(PoolDomainOut, kw_only=True):
    outcome: Literal["added", "already_pooled"]


class PoolAddResult(msgspec.Struct, kw_only=True):
    """The 200 of `POST /pool/add` (`services/pool/inventory.add_domains`)."""

    added: Count
    already_pooled: Count
    domains: list[PoolAddOutcome]


class PoolAddResponse(msgspec.Struct):
    data: PoolAddResult


class PoolRemoveOutcome(msgspec.Struct, kw_only=True):
    domain: str
    outcome: Literal["removed", "absent"]


class PoolRemoveResult(msgspec.Struct, kw_only=True):
    """The 200 of `POST /pool/remove` (`services/pool/inventory.remove_domains`), exactly the
    shape of spec 4.1."""

    removed: Count
    absent: Count
    inbox_count: Count
    domains: list[PoolRemoveOutcome]


class PoolRemoveResponse(msgspec.Struct, kw_only=True):
    data: PoolRemoveResult


class JobDomain(msgspec.Struct):
    id: str  # dom_
    domain: str


class ReservationOut(msgspec.Struct, kw_only=True):
    """A pool reservation (`pcl_`), the answer of an attach (`services/pool/attach.attach`;
    events `domain/pool_reservations.PoolReservation`)."""

    id: str
    status: ReservationStatus
    workspace_id: str
    client_id: int | None
    quantity: int
    domains: list[JobDomain]
    reason: str | None
    created_at: str
    completed_at: str | None


class ReservationResponse(msgspec.Struct):
    data: ReservationOut


class ReleaseOut(msgspec.Struct, kw_only=True):
    """A pool release (`prl_`; `services/pool/attach.release`)."""

    id: str
    status: ReleaseStatus
    domains: list[JobDomain]
    created_at: str
    completed_at: str | None


class ReleaseResponse(msgspec.Struct):
    data: ReleaseOut


class ReplacementOut(msgspec.Struct, kw_only=True):
    """A replacement (`prp_`) of a burned domain by an available pool domain."""

    id: str
    status: ReplacementStatus
    job_id: str | None  # the burned-domain job (`brj_`) that asked for it
    workspace_id: str | None
    client_id: int | None
    burned_domain: JobDomain
    replacement_domain: JobDomain | None  # null when the pool had none (`reason`)
    reason: str | None
    created_at: str
    completed_at: str | None


class ReplacementResponse(msgspec.Struct):
    data: ReplacementOut


class BurnedJobOut(msgspec.Struct, kw_only=True):
    """A burned-domain job (`brj_`)."""

    id: str
    status: BurnedJobStatus
    domain: JobDomain
    operator: str | None
    reason: str
    pool_condition: str | None  # the domain's pool condition once the job completed
    replacement_id: str | None
    created_at: str
    completed_at: str | None


class BurnedJobResponse(msgspec.Struct):
    data: BurnedJobOut


def _iso(ts: float | None) -> str | None:
    return None if ts is None else iso(ts)


def _job_domains(domains: list[dict[str, str]]) -> list[JobDomain]:
    return [JobDomain(d["id"], d["domain"]) for d in domains]


def pool_domain_view(domain: PoolDomain, now: float) -> PoolDomainOut:
    condition: PoolCondition = msgspec.convert(domain.condition_at(now), PoolCondition)
    return PoolDomainOut(
        id=domain.dom_id,
        domain=domain.name,
        condition=condition,
        available_at=_iso(domain.available_at) if condition != "available" else None,
        order_id=domain.order_id,
        inbox_count=domain.inbox_count,
        reservation_id=domain.reservation_id,
        workspace_id=domain.workspace_id,
        client_id=domain.client_id,
        burned=domain.burned,
        added_at=_iso(domain.added_at),
        updated_at=_iso(domain.updated_at),
    )


def pool_add_outcome(
    domain: PoolDomain, now: float, outcome: Literal["added", "already_pooled"]
) -> PoolAddOutcome:
    """The pool domain as `pool_domain_view` shows it, with what the add did to it."""
    return PoolAddOutcome(**msgspec.structs.asdict(pool_domain_view(domain, now)), outcome=outcome)


def reservation_view(reservation: PoolReservation) -> ReservationOut:
    return ReservationOut(
        id=public_id("pcl", reservation.id),
        status=msgspec.convert(reservation.status, ReservationStatus),
        workspace_id=reservation.workspace_id,
        client_id=reservation.client_id,
        quantity=reservation.quantity,
        domains=_job_domains(reservation.domains),
        reason=reservation.reason,
        created_at=iso(reservation.created_at),
        completed_at=_iso(reservation.completed_at),
    )


def release_view(release: PoolRelease) -> ReleaseOut:
    return ReleaseOut(
        id=public_id("prl", release.id),
        status=msgspec.convert(release.status, ReleaseStatus),
        domains=_job_domains(release.domains),
        created_at=iso(release.created_at),
        completed_at=_iso(release.completed_at),
    )


def replacement_view(replacement: PoolReplacement) -> ReplacementOut:
    found = replacement.replacement_domain
    return ReplacementOut(
        id=public_id("prp", replacement.id),
        status=msgspec.convert(replacement.status, ReplacementStatus),
        job_id=replacement.job_id,
        workspace_id=replacement.workspace_id,
        client_id=replacement.client_id,
        burned_domain=_job_domains([replacement.burned_domain])[0],
        replacement_domain=None if found is None else _job_domains([found])[0],
        reason=replacement.reason,
        created_at=iso(replacement.created_at),
        completed_at=_iso(replacement.completed_at),
    )


def burned_job_out(job: BurnedDomainJob) -> BurnedJobOut:
    return BurnedJobOut(
        id=public_id("brj", job.id),
        status=msgspec.convert(job.status, BurnedJobStatus),
        domain=msgspec.convert(job.domain, JobDomain),
        operator=job.operator,
        reason=job.reason,
        pool_condition=job.pool_condition,
        replacement_id=job.replacement_id,
        created_at=iso(job.created_at),
        completed_at=_iso(job.completed_at),
    )


def burned_job_view(job: BurnedDomainJob) -> dict[str, object]:
    """`burned_job_out` as plain data, for the fulfillment operator's records (JSON kept in an
    audit result) and its callers that still index it."""
    view: dict[str, object] = msgspec.to_builtins(burned_job_out(job))
    return view
