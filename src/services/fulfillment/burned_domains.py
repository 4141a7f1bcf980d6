"""Burned-domain jobs (`brj_`): the fulfillment team (gRPC) reports a domain burned.

The domain name is unique in inventory, so the job finds its owner from the name alone. The
job records the burned provider result on the domain's pool record, so the domain is no longer
pool-eligible (`POST /pool/add` refuses it, an unlinked pooled domain leaves the pool), and when
the domain is pool-assigned it starts a pool replacement (`prp_`). Job, pool records and
replacement are saved in one transaction; a concurrent change to any of them re-runs the job
on fresh state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eventsourcing.domain import Aggregate

from adapters import registrar
from domain.burned_domain_jobs import BurnedDomainJob
from domain.errors import NotFound, invalid
from domain.pool_domains import ASSIGNED, PoolDomain
from infra.ids import parse_id, public_id
from services.pool.records import pool_domain_for
from services.pool.replacements import replace_burned
from views.pool import BurnedJobOut, burned_job_out

if TYPE_CHECKING:
    from infra.database import Row
    from runtime.container import Container

MAX_REASON = 500


def _owner_row(container: Container, name: str) -> Row:
    """The inventory row of this name a provider's burned result is about. Sandbox names are
    made up, so the same name may sit in any organization's sandbox too: a live row comes
    first, then one whose tenant pools the name, then one on an order, then the newest."""
    with container.read_db.read() as cur:
        rows = cur.execute(
            "SELECT id, tenant, category, position, order_id FROM domains WHERE name = ?",
            (name,),
        ).fetchall()
        pooling = {
            str(row["tenant"])
            for row in cur.execute(
                "SELECT tenant FROM pool_domains WHERE name = ? "
                "AND condition NOT IN ('not_pooled', 'removed')",
                (name,),
            ).fetchall()
        }
    if not rows:
        raise NotFound("domain", field="domain")
    return dict(max(rows, key=lambda row: (
        str(row["tenant"]).endswith(":live"),
        row["tenant"] in pooling,
        row["category"] == "connected",
        row["position"],
    )))


def burned_domain_job(
    container: Container, *, domain: str, operator: str | None, reason: str
) -> tuple[BurnedDomainJob, list[Aggregate]]:
    """A burned provider result on `domain` (a name): the `brj_` job and what else it
    changes (the pool record, a replacement), all unsaved, for the caller to save in one
    save with its own record of the request."""
    name = registrar.normalize(domain or "")
    if not name:
        raise invalid("domain is required.", "domain")
    if not registrar.is_valid_name(name):
        raise invalid(f"'{domain}' is not a valid domain name.", "domain")
    reason = (reason or "").strip()
    if not reason or len(reason) > MAX_REASON:
        raise invalid(f"reason must be 1 to {MAX_REASON} characters.", "reason")
    row = _owner_row(container, name)
    org_id, environment = str(row["tenant"]).split(":", 1)
    # A sandbox domain's job, replacement and rows are stamped on its organization's clock.
    with container.clock.scoped(org_id, environment):
        return _burned_on(container, row, name, org_id, environment, operator, reason)


def _burned_on(
    container: Container, row: Row, name: str, org_id: str, environment: str,
    operator: str | None, reason: str,
) -> tuple[BurnedDomainJob, list[Aggregate]]:
    at = container.clock.now()
    pool: PoolDomain = pool_domain_for(container, org_id, environment, name)
    job = BurnedDomainJob(
        org_id=org_id,
        environment=environment,
        domain={"id": pool.dom_id or row["id"], "domain": name},
        operator=operator,
        reason=reason,
        at=at,
    )
    job_id = public_id("brj", job.id)
    was_assigned, burned_before = pool.condition == ASSIGNED, pool.burned
    pool.mark_burned(job_id, reason, at, str(row["id"]), row["order_id"])
    changed: list[Aggregate] = [pool]
    replacement_id = None
    if was_assigned:
        replacement, others = replace_burned(container, pool, job_id, at, burned_before)
        replacement_id = public_id("prp", replacement.id)
        changed += [replacement, *others]
    job.complete(pool.condition_at(at), replacement_id, at)
    return job, changed


def load_burned_job(container: Container, tenant: str | None, job_id: str) -> BurnedJobOut:
    """One job as plain data; `tenant` None is the operator's view (any organization)."""
    found = container.store.find(parse_id("brj", job_id), BurnedDomainJob)
    if not isinstance(found, BurnedDomainJob) or tenant not in (None, found.tenant):
        raise NotFound("burned-domain job")
    return burned_job_out(found)
