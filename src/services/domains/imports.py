"""Domain imports: synchronous (`POST /domains/import`) and queued (`POST /domains/import/jobs`).

Both record an `imp_` job listing the nameserver groups the customer sets at their registrar.
The synchronous path processes the domains in the request; it needs a DNS account free for
all of them (else 429 `rate_limited` with `details.reason: "dns_account_capacity"`, nothing
recorded). A DNS account takes at most 10 names at once, so a synchronous import of more
always gets that 429, however long it waits: send more than 10 to the queued path (500 at
most), which is what the 429's message says. The queued path returns the job `in_progress`
and the domain worker processes it. Each domain the DNS provider accepts becomes a `dom_`
inventory domain (source `imported`): `available` once its nameservers are pointed,
`action_required` until then. The worker re-checks waiting domains until they are pointed. Rules of the simulated DNS: `adapters/dns.py`.

A domain that cannot become usable inventory fails on its own (the job's `domains[].reason`),
the others go on:

| reason | why |
| --- | --- |
| `tld_not_supported` | its TLD is not in the catalog (`GET /domains/tlds`): no order could use it |
| `premium_domain_not_supported` | a premium name: no order could use it |
| `held_by_another_organization` | another organization of this environment holds the name |
| `already_in_inventory` | this account holds it already |
| `dns_zone_refused` | the DNS provider refused the zone (a first label starting with `importfail`) |
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from eventsourcing.domain import Aggregate

from adapters import dns, registrar
from domain.domains import Domain
from domain.errors import NotFound, RetryLater, invalid
from domain.imports import (
    AWAITING,
    ITEM_DONE,
    ITEM_FAILED,
    QUEUED,
    ImportedName,
    ImportJob,
    imported_name_id,
)
from infra.ids import parse_id, public_id
from projections.domain_lookups import owners_by_name, tenant_rows_by_name
from services.accounts.keys import Principal
from services.accounts.workspaces import load_target_workspace
from services.domains.commands import (
    MAX_IMPORT_JOB,
    MAX_SYNC_IMPORT,
    ImportDomains,
    SubmitImportJob,
)
from services.domains.use_cases import new_domain
from views.jobs import ImportJobOut, import_view

if TYPE_CHECKING:
    from runtime.container import Container

CAPACITY_RETRY_SECONDS = 30


class DnsAccountsBusy(RetryLater):
    def __init__(self) -> None:
        super().__init__(
            "rate_limited",
            "No DNS account is free for a synchronous import of these domains; retry later "
            "or use POST /domains/import/jobs.",
            CAPACITY_RETRY_SECONDS,
            details={
                "reason": "dns_account_capacity",
                "retry_after_seconds": CAPACITY_RETRY_SECONDS,
            },
        )



def _names(command: ImportDomains | SubmitImportJob, most: int) -> list[str]:
    sent = command.domains
    if not 1 <= len(sent) <= most:
        raise invalid(f"Send 1 to {most} domains.", "domains")
    names: list[str] = []
    for index, value in enumerate(sent):
        name = registrar.normalize(value)
        if not registrar.is_valid_name(name):
            raise invalid(f"'{value}' is not a valid domain name.", f"domains[{index}]")
        if name in names:
            raise invalid(f"{name} is listed twice.", f"domains[{index}]")
        names.append(name)
    return names


def _new_job(
    container: Container,
    principal: Principal,
    command: ImportDomains | SubmitImportJob,
    names: list[str],
    mode: str,
) -> ImportJob:
    workspace_id = command.workspace_id
    if workspace_id is not None:
        load_target_workspace(container, principal.org_id, principal.environment, workspace_id)
    return ImportJob(
        org_id=principal.org_id,
        environment=principal.environment,
        workspace_id=workspace_id,
        mode=mode,
        items=[{"domain": n, "status": QUEUED, "dom_id": None, "reason": None} for n in names],
        # Names the job will refuse whatever the accounts hold need no nameservers, in the
        # queued job's first answer as in the synchronous one.
        nameserver_groups=dns.nameserver_groups([n for n in names if _name_refusal(n) is None]),
        created_at=container.clock.now(),
    )


def import_now(container: Container, principal: Principal, command: ImportDomains) -> ImportJobOut:
    names = _names(command, MAX_SYNC_IMPORT)
    # Spec 7's capacity refusal, for sandbox keys too (decisions 5: they answer as live keys
    # do, and every simulated error path can be reached on purpose).
    if not dns.sync_capacity_free(names):
        raise DnsAccountsBusy()

    def run() -> ImportJobOut:  # again on a conflict: a racing import took a name first
        job = _new_job(container, principal, command, names, "sync")
        others = _advance(container, job)
        container.unit_of_work.save(job, *others)
        return import_view(job)

    return container.unit_of_work.retrying(run)


def submit_job(
    container: Container, principal: Principal, command: SubmitImportJob
) -> ImportJobOut:
    names = _names(command, MAX_IMPORT_JOB)
    job = _new_job(container, principal, command, names, "async")
    container.unit_of_work.save(job)
    return import_view(job)


def _advance(container: Container, job: ImportJob) -> list[Aggregate]:
    """Move every domain of the job as far as the DNS allows; returns the Domains (and the
    ImportedName of each new one) to save with the job."""
    at = container.clock.now()
    items = copy.deepcopy(job.items)
    changed: list[Aggregate] = []
    queued = [i["domain"] for i in items if i["status"] == QUEUED]
    with container.read_db.read() as cur:
        owned = {r["name"] for r in tenant_rows_by_name(cur, job.tenant, queued)}
        owners = owners_by_name(cur, queued, job.tenant)
    for item in items:
        name = item["domain"]
        if item["status"] == QUEUED:
            refusal = _refusal(name, owners[name] - {job.tenant})
            if refusal is None and (name in owned or _imported_before(container, job, name)):
                refusal = "already_in_inventory"
            if refusal is not None:
                item.update(status=ITEM_FAILED, reason=refusal)
                continue
            domain = new_domain(container, job.org_id, job.environment, name, "imported", False)
            item["dom_id"] = public_id("dom", domain.id)
            changed.append(
                ImportedName(org_id=job.org_id, environment=job.environment, name=name,
                             domain_id=item["dom_id"])
            )
            if dns.nameservers_pointed(name, job.created_at, at):
                item["status"] = ITEM_DONE
            else:
                # `at` was read before the DNS records (an RSA key) were made; never let the
                # domain's updated_at fall before its created_at.
                domain.require_action("nameservers_not_pointed", max(at, domain.created_at))
                item.update(status=AWAITING, reason="nameservers_not_pointed")
            changed.append(domain)
        elif item["status"] == AWAITING and dns.nameservers_pointed(name, job.created_at, at):
            found = container.store.find(parse_id("dom", item["dom_id"]), Domain)
            if isinstance(found, Domain) and found.status == "action_required":
                found.nameservers_pointed(at)
                changed.append(found)
            item.update(status=ITEM_DONE, reason=None)
    job.progress(items, at)
    return changed


def _refusal(name: str, other_owners: set[str]) -> str | None:
    """Why this name cannot become usable inventory of the importing account, if it cannot."""
    refusal = _name_refusal(name)
    if other_owners and refusal in (None, "dns_zone_refused"):  # the zone is not asked for then
        return "held_by_another_organization"
    return refusal


def _name_refusal(name: str) -> str | None:
    """What refuses the name itself, whoever imports it."""
    if registrar.tld_of(name) is None:
        return "tld_not_supported"
    if registrar.registry_refusal(name) == registrar.PREMIUM:
        return "premium_domain_not_supported"
    if dns.zone_refused(name):
        return "dns_zone_refused"
    return None


def _imported_before(container: Container, job: ImportJob, name: str) -> bool:
    """Read from the event store: the read models may not show a racing import's domain yet."""
    marker = imported_name_id(job.org_id, job.environment, name)
    return container.store.find(marker, ImportedName) is not None


def advance_job(container: Container, job_id: str) -> None:
    """One pass of the domain worker over an open job (a version conflict means another
    worker got there first; the next pass sees its result)."""

    def run() -> None:
        job = container.store.find(parse_id("imp", job_id), ImportJob)
        if not isinstance(job, ImportJob) or not job.is_open:
            return
        others = _advance(container, job)
        if job.pending_events or others:
            container.store.save(job, *others)

    container.unit_of_work.retrying(run)


def load_job(container: Container, principal: Principal, job_id: str) -> ImportJobOut:
    found = container.store.find(parse_id("imp", job_id), ImportJob)
    if not isinstance(found, ImportJob) or found.tenant != principal.tenant:
        raise NotFound("import job")
    return import_view(found)
