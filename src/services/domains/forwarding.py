"""Forwarding: point domains' web traffic at one URL (`POST /domains/forwarding`).

Every domain must be in the tenant's inventory (owned or on an order), else 409
`domain_not_imported` naming it. Domains already forwarding to the URL come back in
`completed`; the rest are `pending` on a new `fwj_` job, which the domain worker finishes
(for every key: the job is asynchronous, and `completed` at acceptance means already correct,
never just changed; a domain an earlier open job will still change is pending). A target that
does not resolve (host ending in `.invalid`) fails the job: `domain.forwarding_failed` per
domain, else
`domain.forwarding_updated` per domain changed (one per domain, from the job's own event).

A domain lives either as its own `Domain` aggregate (imported) or as an item of an order (the
order's domains): the job sets the URL on whichever holds it, on both for an imported domain
an order named, so the inventory row shows it either way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from eventsourcing.domain import Aggregate

from adapters import dns, registrar
from domain.domains import Domain
from domain.errors import DomainError, NotFound, invalid
from domain.forwarding import ForwardingJob
from domain.orders import ACTIVE_STATES, Order
from infra.ids import parse_id
from projections.domain_lookups import tenant_rows_by_name
from services.accounts.keys import Principal
from services.domains.commands import MAX_FORWARDING, SetForwarding
from views.jobs import ForwardingJobOut, forwarding_view
from webhooks.urls import FORWARDING_URL, check_forwarding_target

if TYPE_CHECKING:
    from infra.database import Row
    from runtime.container import Container



def _canonical(url: str) -> str:
    """Scheme and host are case-insensitive: `https://EXAMPLE.org/z` is the URL already set
    as `https://example.org/z`, so the domain is already correct."""
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. an unclosed `[`: the checks below refuse it
        return url
    userinfo, at, host = parts.netloc.rpartition("@")  # credentials keep their case
    netloc = f"{userinfo}{at}{host.lower()}"
    return urlunsplit(parts._replace(scheme=parts.scheme.lower(), netloc=netloc))


def submit(container: Container, principal: Principal, command: SetForwarding) -> ForwardingJobOut:
    url = _canonical(command.forwarding_url.strip())
    if not FORWARDING_URL.match(url):
        raise invalid("forwarding_url must be an http(s) URL.", "forwarding_url")
    check_forwarding_target(url, "forwarding_url", container.settings.allow_http_webhooks)
    sent = command.domains
    if not 1 <= len(sent) <= MAX_FORWARDING:
        raise invalid(f"Send 1 to {MAX_FORWARDING} domains.", "domains")
    names = [registrar.normalize(n) for n in sent]
    with container.read_db.read() as cur:
        rows = {r["name"]: r for r in tenant_rows_by_name(cur, principal.tenant, names)}
        open_ids = [
            r["id"]
            for r in cur.execute(
                "SELECT id FROM forwarding_jobs WHERE tenant = ? AND status = 'in_progress'",
                (principal.tenant,),
            ).fetchall()
        ]
    changing = _pending_in(container, open_ids)
    completed: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    for index, name in enumerate(names):
        row = rows.get(name)
        if row is None:
            raise DomainError(
                "domain_not_imported",
                f"{name} is not in this account's inventory.",
                field=f"domains[{index}]",
            )
        if any(item["id"] == row["id"] for item in completed + pending):
            raise invalid(f"{name} is listed twice.", f"domains[{index}]")
        # A domain an earlier job will still change is not "already correct": this job waits
        # its turn (the worker finishes jobs in order) so that the later URL is the one kept.
        correct = row["forwarding_url"] == url and row["id"] not in changing
        target = completed if correct else pending
        target.append({"id": row["id"], "domain": name})

    job = ForwardingJob(
        org_id=principal.org_id,
        environment=principal.environment,
        forwarding_url=url,
        completed=completed,
        pending=pending,
        created_at=container.clock.now(),
    )
    container.unit_of_work.save(job)
    return forwarding_view(job)


def _pending_in(container: Container, job_ids: list[str]) -> set[str]:
    """The `dom_` ids that these open jobs have yet to change."""
    ids: set[str] = set()
    for job_id in job_ids:
        job = container.store.find(parse_id("fwj", job_id), ForwardingJob)
        if isinstance(job, ForwardingJob) and job.status == "in_progress":
            ids.update(item["id"] for item in job.pending)
    return ids


def _finish(container: Container, job: ForwardingJob) -> list[Aggregate]:
    at = container.clock.now()
    resolves = dns.forwarding_resolves(job.forwarding_url)
    rows = _pending_rows(container, job)
    changed: list[Aggregate] = []
    if resolves:
        for item in job.pending:
            domain = container.store.find(parse_id("dom", item["id"]), Domain)
            if isinstance(domain, Domain):
                domain.set_forwarding(job.forwarding_url, at)
                changed.append(domain)
        changed += _forward_order_domains(container, job, rows, at)
    reason = None if resolves else dns.FORWARDING_UNRESOLVABLE
    # Each domain's status as the job finishes, for the `domain.*` event it fires (spec 6:
    # receivers decide from `data.status`); forwarding itself never moves it.
    job.finish(resolves, reason, {dom_id: row["status"] for dom_id, row in rows.items()}, at)
    return changed


def _pending_rows(container: Container, job: ForwardingJob) -> dict[str, Row]:
    """The inventory rows (status, holding order) of the job's pending domains, by `dom_` id."""
    ids = [item["id"] for item in job.pending]
    if not ids:
        return {}
    marks = ", ".join("?" for _ in ids)
    with container.read_db.read() as cur:
        rows = cur.execute(
            f"SELECT id, status, order_id FROM domains WHERE tenant = ? AND id IN ({marks})",
            (job.tenant, *ids),
        ).fetchall()
    return {row["id"]: row for row in rows}


def _holding_orders(
    container: Container, tenant: str, ids: list[str], rows: dict[str, Row]
) -> dict[str, list[str]]:
    """The `dom_` ids by the orders holding them: the order a connected row names and every
    other active order listing the domain (one name may serve a suite_a and a suite_b order),
    else (a purchase's inventory, a released order's) the last order that listed it."""
    marks = ", ".join("?" for _ in ids)
    with container.read_db.read() as cur:
        listed = cur.execute(
            f"SELECT dom_id, order_id, status FROM order_domains WHERE tenant = ? "
            f"AND dom_id IN ({marks}) ORDER BY position",
            (tenant, *ids),
        ).fetchall()
    by_order: dict[str, list[str]] = {}
    for dom_id in ids:
        lists = [r for r in listed if r["dom_id"] == dom_id]
        connected = rows[dom_id]["order_id"] if dom_id in rows else None
        if connected:
            active = [r["order_id"] for r in lists if r["status"] in ACTIVE_STATES]
            holders = list(dict.fromkeys([connected, *active]))
        else:
            holders = [r["order_id"] for r in lists[-1:]]
        for order_id in holders:
            by_order.setdefault(order_id, []).append(dom_id)
    return by_order


def _forward_order_domains(
    container: Container, job: ForwardingJob, rows: dict[str, Row], at: float
) -> list[Aggregate]:
    """The orders holding any of the job's pending domains (`rows`: their inventory rows),
    with the URL set on them."""
    ids = [item["id"] for item in job.pending]
    if not ids:
        return []
    orders: list[Aggregate] = []
    for order_id, dom_ids in _holding_orders(container, job.tenant, ids, rows).items():
        order = container.store.find(parse_id("ord", order_id), Order)
        if isinstance(order, Order) and order.tenant == job.tenant:
            version = order.version
            order.set_domain_forwarding(dom_ids, job.forwarding_url, at)
            if order.version != version:
                orders.append(order)
    return orders


def finish_job(container: Container, job_id: str) -> None:
    def run() -> None:
        job = container.store.find(parse_id("fwj", job_id), ForwardingJob)
        if not isinstance(job, ForwardingJob) or job.status != "in_progress":
            return
        container.store.save(job, *_finish(container, job))

    container.unit_of_work.retrying(run)


def load_job(container: Container, principal: Principal, job_id: str) -> ForwardingJobOut:
    found = container.store.find(parse_id("fwj", job_id), ForwardingJob)
    if not isinstance(found, ForwardingJob) or found.tenant != principal.tenant:
        raise NotFound("forwarding job")
    if found.status != "in_progress":  # its domains' URLs are listed by a read model
        container.unit_of_work.wait_for_stored()
    return forwarding_view(found)
