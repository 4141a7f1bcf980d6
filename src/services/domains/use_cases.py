"""Domain use cases: availability (spec 2.5), the inventory views, and the helpers orders use.

Availability is answered from the read models alone (two indexed queries for up to 50
names): the registrar simulator says whether a name could be registered, `domain_usage` says
which suites use it now, `domains` says who owns it.

| the name | `available` | `reason` |
| --- | --- | --- |
| invalid syntax or a TLD outside the catalog | false | `invalid` |
| first label starts with `premium` | false | `premium` |
| first label contains `taken`, or another organization holds it here | false | `registered` |
| already in this organization's inventory (environment of the key) | true (no registration needed) | |
| anything else | true | |

`usable_for`: `[suite_a, suite_b]` when nothing or only `suite_a` uses the name, `[suite_a]`
when `suite_b` does; `[]` when the name is not available.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from adapters import dns, registrar
from domain.domains import Domain, usable_for
from domain.errors import NotFound, invalid
from infra.ids import parse_id
from projections.domain_lookups import owners_by_name, usage_by_name
from services.accounts.keys import Principal
from services.domains.commands import MAX_AVAILABILITY, CheckAvailability
from views.domains import AvailabilityRow, AvailabilityRows, DomainOut, row_view, suites

if TYPE_CHECKING:
    from infra.database import Row
    from runtime.container import Container


def check_availability(
    container: Container, principal: Principal, command: CheckAvailability
) -> AvailabilityRows:
    tenant, names = principal.tenant, command.domains
    if not 1 <= len(names) <= MAX_AVAILABILITY:
        raise invalid(f"Send 1 to {MAX_AVAILABILITY} domains.", "domains")
    normalized = [registrar.normalize(n) for n in names]
    distinct = sorted(set(normalized))
    with container.read_db.read() as cur:
        usage = usage_by_name(cur, distinct, tenant)
        owners = owners_by_name(cur, distinct, tenant)
    rows = []
    for sent, name in zip(names, normalized, strict=True):
        price, renewal = registrar.prices(name)
        reason = registrar.registry_refusal(name)
        owned = tenant in owners[name]
        if reason is None and not owned and not registrar.is_registrable(name):
            reason = registrar.INVALID
        if reason == registrar.REGISTERED and owned:
            reason = None
        if reason is None and not owned and owners[name] - {tenant}:
            reason = registrar.REGISTERED
        rows.append(
            AvailabilityRow(
                domain=name if reason != registrar.INVALID else sent,
                available=reason is None,
                price_cents=price,
                renewal_price_cents=renewal,
                currency=registrar.CURRENCY,
                usable_for=suites(usable_for(usage[name])) if reason is None else [],
                owned=owned,
                reason=msgspec.UNSET if reason is None else reason,
            )
        )
    return AvailabilityRows(domains=rows)


def new_domain(
    container: Container, org_id: str, environment: str, name: str, source: str, auto_renew: bool
) -> Domain:
    """A Domain with real DNS records and catalog prices; NOT saved (save it with the
    aggregates of the same command)."""
    normalized = registrar.normalize(name)
    price, renewal = registrar.prices(normalized)
    return Domain(
        org_id=org_id,
        environment=environment,
        name=normalized,
        source=source,
        auto_renew=auto_renew,
        price_cents=price,
        renewal_price_cents=renewal,
        dns_records=dns.mail_records(normalized),
        created_at=container.clock.now(),
    )


def render_rows(container: Container, rows: list[Row]) -> list[DomainOut]:
    if not rows:
        return []
    names = sorted({row["name"] for row in rows})
    with container.read_db.read() as cur:
        usage = usage_by_name(cur, names, rows[0]["tenant"])  # rows of one tenant
    return [row_view(row, usage[row["name"]]) for row in rows]


def get_domain(container: Container, tenant: str, domain_id: str) -> DomainOut:
    if parse_id("dom", domain_id) is None:
        raise NotFound("domain")
    with container.read_db.read() as cur:
        row = cur.execute(
            "SELECT * FROM domains WHERE id = ? AND tenant = ?", (domain_id, tenant)
        ).fetchone()
    if row is None:
        raise NotFound("domain")
    return render_rows(container, [row])[0]
