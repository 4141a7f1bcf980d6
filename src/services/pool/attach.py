"""Pool attach (`pcl_`) and release (`prl_`): asynchronous, all-or-nothing.

Attach takes exactly `quantity` available pool domains for a workspace (and, kind m, one of its
clients) or refuses with 409 `insufficient_inventory` and no pool change (`quantity` is 1 to
100 in one reservation; a larger one the pool cannot fill is refused as short too). A kind m workspace
without a saved login pair is refused (400 `provider_login_credentials_required`) before any
domain is reserved. The reservation answers `in_progress` with its domains `reserved`, and
stays so until final success (`completed`, domains `assigned`) or failure (`failed`, domains
back to `available`). Both are asynchronous (spec 1, 3) for every key: the pool worker finishes
a sandbox job as soon as it sees it, a live one a fulfillment step (2 s by default) later on
the clock.

Concurrency: the reservation and the reserved domains are saved in one transaction, each
domain at the version it was read; when another attach saved one of them first the store
refuses the whole save and the attach decides again on fresh state, so two attaches racing
for the last domains never both succeed.

Release (`domains`: 1..25 names, each `assigned` to the caller, else 409
`pool_state_conflict` listing them) moves the domains to `releasing`; when it completes they
rest `idle_quarantined` for `live_rest_seconds` (as long as a new domain warms up; sandbox:
none) and then count as `available` again.
"""

# The pool attach use case. This docstring is the OpenAPI description of `POST /pool/attach`
# and `POST /pool/release` (`gateway/rest/pool.py`). Commands: `services/pool/commands.py`
# (`AttachPool`, `ReleasePool`); events: `domain/pool_reservations.py` (`PoolReservation`),
# `domain/pool_releases.py`; answers: `views/pool.py` (`ReservationOut`, `ReleaseOut`); read
# model: `projections/pool.py`, whose `pool_jobs` table is the to-do list of `workers/pool.py`.

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from domain.errors import DomainError, NotFound, invalid
from domain.pool_domains import ASSIGNED, RESERVED, PoolDomain
from domain.pool_releases import PoolRelease
from domain.pool_reservations import IN_PROGRESS, PoolReservation
from domain.workspaces import Workspace
from infra.idempotency import created_before
from infra.ids import parse_id, public_id
from services.accounts.keys import Principal
from services.accounts.workspaces import check_client, load_target_workspace
from services.pool.commands import MAX_QUANTITY, AttachPool, ReleasePool
from services.pool.inventory import live_rest_seconds, pool_names
from services.pool.records import find_pool_domain, take_available
from views.pool import ReleaseOut, ReservationOut, release_view, reservation_view

if TYPE_CHECKING:
    from runtime.container import Container

# Twenty attaches racing over ten domains: each conflict means another attach progressed.
ATTACH_ATTEMPTS = 40


def _check_target(workspace: Workspace, client_id: int | None) -> None:
    # The missing login pair is the target's own fault (spec 4.2, 9: 2026-07-28), so it is
    # reported first, whatever client the body names.
    if workspace.provider == "m" and not workspace.has_login_pair:
        raise DomainError(
            "provider_login_credentials_required",
            "Pool attach to a kind m workspace needs its saved login email and password; "
            "add them with PATCH /workspaces/{id}.",
            field="workspace_id",
        )
    if client_id is not None:
        check_client(workspace, client_id, field="client_id")


def attach(container: Container, principal: Principal, command: AttachPool) -> ReservationOut:
    """The pool attach use case (`POST /pool/attach`)."""
    quantity = command.quantity
    if quantity < 1:
        raise invalid("quantity must be at least 1.", "quantity")
    workspace_id, client_id = command.workspace_id, command.client_id
    workspace = load_target_workspace(
        container, principal.org_id, principal.environment, workspace_id
    )
    _check_target(workspace, client_id)

    def run() -> ReservationOut:
        if (earlier := created_before(container, "pool_reservation", PoolReservation)) is not None:
            return reservation_view(earlier)  # saved by an earlier attempt of this request
        chosen = take_available(container, principal.tenant, quantity)
        if len(chosen) < quantity:
            raise DomainError(
                "insufficient_inventory",
                f"The pool cannot supply {quantity} domains now; nothing was reserved.",
                field="quantity",
                details={"requested": quantity, "available": len(chosen)},
            )
        # Checked after the shortage: a quantity the pool cannot fill is `insufficient_inventory`
        # (spec 4.2, 7) however large; the cap only bounds one reservation's size.
        if quantity > MAX_QUANTITY:
            raise invalid(f"quantity must be 1 to {MAX_QUANTITY}.", "quantity")
        at = container.clock.now()
        reservation = PoolReservation(
            org_id=principal.org_id,
            environment=principal.environment,
            workspace_id=workspace_id,
            client_id=client_id,
            quantity=quantity,
            domains=[{"id": d.dom_id or "", "domain": d.name} for d in chosen],
            at=at,
        )
        reservation_id = public_id("pcl", reservation.id)
        for domain in chosen:
            domain.reserve(
                reservation_id=reservation_id, workspace_id=workspace_id, client_id=client_id, at=at
            )
        container.unit_of_work.save(reservation, *chosen)
        return reservation_view(reservation)

    return container.unit_of_work.retrying(run, attempts=ATTACH_ATTEMPTS)


def _finish_reservation(
    reservation: PoolReservation, domains: Sequence[PoolDomain | None], at: float
) -> None:
    reservation_id = public_id("pcl", reservation.id)
    held = [
        d
        for d in domains
        if d is not None and d.condition == RESERVED and d.reservation_id == reservation_id
    ]
    if len(held) == len(domains) and not any(d.burned for d in held):
        for domain in held:
            domain.assign(reservation_id, at)
        reservation.complete(at)
        return
    for domain in held:
        domain.unreserve(reservation_id, at)
    reservation.fail("domain_burned", at)


def complete_reservation(container: Container, reservation_id: str) -> None:
    """The pool worker's step for a live reservation (idempotent: a finished one is left)."""

    def run() -> None:
        reservation = container.store.find(parse_id("pcl", reservation_id), PoolReservation)
        if not isinstance(reservation, PoolReservation) or reservation.status != IN_PROGRESS:
            return
        domains = [
            find_pool_domain(container, reservation.org_id, reservation.environment, d["domain"])
            for d in reservation.domains
        ]
        _finish_reservation(reservation, domains, container.clock.now())
        container.store.save(reservation, *[d for d in domains if d is not None])

    container.unit_of_work.retrying(run)


def release(container: Container, principal: Principal, command: ReleasePool) -> ReleaseOut:
    """The pool release use case (`POST /pool/release`)."""
    names = pool_names(command.domains)

    def run() -> ReleaseOut:
        at = container.clock.now()
        found = {
            n: find_pool_domain(container, principal.org_id, principal.environment, n)
            for n in names
        }
        refused = [
            {"domain": n, "condition": d.condition_at(at) if d else "not_pooled"}
            for n, d in found.items()
            if d is None or d.condition != ASSIGNED
        ]
        if refused:
            raise DomainError(
                "pool_state_conflict",
                "Only assigned pool domains can be released; nothing was released.",
                field="domains",
                details={"domains": refused},
            )
        domains = [d for d in found.values() if d is not None]
        job = PoolRelease(
            org_id=principal.org_id,
            environment=principal.environment,
            domains=[{"id": d.dom_id or "", "domain": d.name} for d in domains],
            at=at,
        )
        release_id = public_id("prl", job.id)
        for domain in domains:
            domain.start_release(release_id, at)
        container.unit_of_work.save(job, *domains)
        return release_view(job)

    return container.unit_of_work.retrying(run)


def _finish_release(
    job: PoolRelease, domains: Sequence[PoolDomain | None], at: float, quarantine: float
) -> None:
    release_id = public_id("prl", job.id)
    for domain in domains:
        if domain is not None and domain.release_id == release_id:
            domain.finish_release(release_id, at + quarantine, at)
    job.complete(at)


def complete_release(container: Container, release_id: str) -> None:
    def run() -> None:
        job = container.store.find(parse_id("prl", release_id), PoolRelease)
        if not isinstance(job, PoolRelease) or job.status != IN_PROGRESS:
            return
        domains = [
            find_pool_domain(container, job.org_id, job.environment, d["domain"])
            for d in job.domains
        ]
        quarantine = live_rest_seconds(container) if job.environment == "live" else 0
        _finish_release(job, domains, container.clock.now(), quarantine)
        container.store.save(job, *[d for d in domains if d is not None])

    container.unit_of_work.retrying(run)


def load_reservation(
    container: Container, principal: Principal, reservation_id: str
) -> ReservationOut:
    found = container.store.find(parse_id("pcl", reservation_id), PoolReservation)
    if not isinstance(found, PoolReservation) or found.tenant != principal.tenant:
        raise NotFound("pool reservation")
    if found.status != IN_PROGRESS:  # its domains' conditions are listed by a read model
        container.unit_of_work.wait_for_stored()
    return reservation_view(found)


def load_release(container: Container, principal: Principal, release_id: str) -> ReleaseOut:
    found = container.store.find(parse_id("prl", release_id), PoolRelease)
    if not isinstance(found, PoolRelease) or found.tenant != principal.tenant:
        raise NotFound("pool release")
    if found.status != IN_PROGRESS:
        container.unit_of_work.wait_for_stored()
    return release_view(found)
