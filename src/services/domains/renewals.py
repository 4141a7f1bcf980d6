"""Yearly renewal and lapse of the domains bought through the service (decisions.md 6).

On each anniversary of its registration a bought domain renews, charged its catalog
`renewal_price_cents` from the wallet (a `renewal` entry; 0 cents in the sandbox), or, with
`auto_renew` off, lapses: it leaves inventory and the orders that held it. A live renewal the
wallet cannot cover sends the domain to `action_required` (reason `renewal_payment_failed`,
webhook `domain.action_required`) and is tried again daily; one still unpaid 30 days after its
anniversary lapses. Imported domains renew with the customer's registrar, never here. A
`failed` domain renews too when it was paid for (it broke an order it was merely on); one its
own failed order bought, refunded with that order, lapses at its anniversary.

Live terms run on real time (the fulfillment worker's pass); a sandbox's on its clock (its
advances). Each move loads, decides and saves the DomainTerm with its version check, so two
runners never renew one year twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
from eventsourcing.domain import Aggregate

from adapters import registrar
from domain.domain_terms import DAY, DomainTerm, anniversary, term_id
from domain.errors import DomainError, NotFound, invalid
from domain.orders import FAILED, Order, never_registered
from infra.clock import iso
from infra.ids import parse_id
from services.accounts.keys import Principal
from services.accounts.wallet import load_wallet
from services.domains.commands import UpdateDomain
from services.domains.use_cases import get_domain
from services.pool.leaving import lapse_from_pool
from services.swaps.endings import fail_swaps_of_lapsed
from views.domains import DomainOut

if TYPE_CHECKING:
    from infra.database import Cursor, Row
    from runtime.container import Container

RENEWS, LAPSES = "renewals", "lapses"
# A year is at least this long: rows registered later cannot be due yet (a cheap filter).
SHORTEST_YEAR = 365 * DAY
_DUE_SQL = (
    "SELECT d.id, d.created_at, d.auto_renew, t.due_at, t.status AS term_status "
    "FROM domains d LEFT JOIN domain_terms t ON t.id = d.id "
    "WHERE d.source <> 'imported' AND d.status <> 'in_progress' "
    "AND COALESCE(t.due_at, d.created_at + ?) <= ? "
    "AND COALESCE(t.status, 'active') <> 'lapsed'"
)


def due_terms(cur: Cursor, tenant_clause: str, param: str, due_by: float) -> list[tuple[float, str, str]]:
    """(due time, `renewals` or `lapses`, dom_id) of the bought domains due by `due_by`."""
    rows = cur.execute(
        f"{_DUE_SQL} AND d.{tenant_clause} ORDER BY d.created_at LIMIT 500",
        (SHORTEST_YEAR, due_by, param),
    ).fetchall()
    found = []
    for row in rows:
        due = (
            anniversary(float(row["created_at"]), 1)
            if row["due_at"] is None
            else float(row["due_at"])
        )
        if due <= due_by:
            found.append((due, RENEWS if row["auto_renew"] else LAPSES, str(row["id"])))
    return found


def _row(container: Container, dom_id: str) -> Row | None:
    with container.read_db.read() as cur:
        row = cur.execute("SELECT * FROM domains WHERE id = ?", (dom_id,)).fetchone()
    return dict(row) if row is not None else None


def load_term(container: Container, row: Row) -> DomainTerm:
    """The domain's term, started (unsaved) from its row on first need."""
    found = container.store.find(term_id(row["id"]), DomainTerm)
    if isinstance(found, DomainTerm):
        return found
    org_id, environment = str(row["tenant"]).rsplit(":", 1)
    return DomainTerm(
        dom_id=row["id"],
        org_id=org_id,
        environment=environment,
        name=row["name"],
        registered_at=float(row["created_at"]),
        auto_renew=bool(row["auto_renew"]),
    )


def run_term(container: Container, dom_id: str) -> str | None:
    """Renew or lapse the domain if its term is due on the clock read now (an advance pins it
    at the due time); returns what it did (`renewals`, `lapses`) or None."""

    def run() -> str | None:
        row = _row(container, dom_id)
        if row is None or row["source"] == "imported" or _not_registered_yet(container, row):
            return None
        term = load_term(container, row)
        at = container.clock.now()
        if term.due_at is None or term.due_at > at:
            return None
        if not term.auto_renew or term.grace_over or _refunded(container, row, term):
            term.lapse(at)
            # Gone from inventory and its orders, it lends the pool no inboxes and no longer
            # is the organization's: it leaves the pool too (`pool.domain_removed`), even
            # from a workspace it was attached to.
            left = lapse_from_pool(container, term.org_id, term.environment, term.name, at)
            failed = fail_swaps_of_lapsed(container, term.tenant, term.name, at)
            container.store.save(
                *_drop_from_orders(container, row, term, at), *left, *failed, term
            )
            return LAPSES
        return _renew(container, row, term, at)

    return container.unit_of_work.retrying(run)


def _renew(container: Container, row: Row, term: DomainTerm, at: float) -> str | None:
    live = term.environment == "live"
    cents = registrar.prices(term.name)[1] if live else 0
    wallet = load_wallet(container, term.org_id, term.environment)
    # The new end of the term, a year past the anniversary being renewed.
    renewed_until = anniversary(term.registered_at, term.years + 1)
    description = f"Renewal of {term.name} until {iso(renewed_until)[:10]}"
    try:
        wallet.renew(cents, _ordered_by(container, term), description, at)
    except DomainError:
        term.payment_failed(cents, at)
        container.store.save(term)
        return None
    term.renew(cents, at)
    container.store.save(wallet, term)
    return RENEWS


def _not_registered_yet(container: Container, row: Row) -> bool:
    """A name its order was to register but has not (the order waits on the partner before
    its `register` step): not the organization's, so there is no year to renew or end; the
    row's status alone does not tell, as an order may wait on the partner after registering."""
    if row["status"] != "action_required" or not row["order_id"]:
        return False
    order = container.store.find(parse_id("ord", str(row["order_id"])), Order)
    if not isinstance(order, Order):
        return False
    return any(item["id"] == row["id"] and never_registered(item) for item in order.domains)


def _orders_of(container: Container, term: DomainTerm) -> list[str]:
    """The orders that listed the domain, first the one that bought it."""
    with container.read_db.read() as cur:
        rows = cur.execute(
            "SELECT order_id FROM order_domains WHERE tenant = ? AND dom_id = ? "
            "ORDER BY position",
            (term.tenant, term.dom_id),
        ).fetchall()
    return list(dict.fromkeys(str(r["order_id"]) for r in rows))


def _ordered_by(container: Container, term: DomainTerm) -> str | None:
    found = _orders_of(container, term)
    return found[0] if found else None


def _refunded(container: Container, row: Row, term: DomainTerm) -> bool:
    """A failed domain whose registration its own failed order refunded: no one paid for its
    year, so it lapses at the anniversary instead of renewing. One that broke an order it was
    merely on (bought and paid before) renews as any other."""
    if row["status"] != "failed":
        return False
    buyer = _ordered_by(container, term)
    order = container.store.find(parse_id("ord", buyer), Order) if buyer else None
    return isinstance(order, Order) and order.status == FAILED


def _drop_from_orders(
    container: Container, row: Row, term: DomainTerm, at: float
) -> list[Aggregate]:
    order_ids = dict.fromkeys([*_orders_of(container, term), row["order_id"]])
    dropped: list[Aggregate] = []
    for order_id in order_ids:
        if order_id is None:
            continue
        order = container.store.find(parse_id("ord", order_id), Order)
        if isinstance(order, Order) and order.drop_lapsed_domain(term.name, at):
            dropped.append(order)
    return dropped


def set_auto_renew(container: Container, tenant: str, dom_id: str, auto_renew: bool | None) -> None:
    """`PATCH /domains/{id}`: a bought domain renews, or lapses at the end of its year."""

    def run() -> None:
        row = _row(container, dom_id) if parse_id("dom", dom_id) is not None else None
        if row is None or row["tenant"] != tenant:
            raise NotFound("domain")
        if auto_renew is None:
            raise invalid("Send `auto_renew`: true or false.", "auto_renew")
        if row["source"] == "imported":
            raise DomainError(
                "domain_not_renewable",
                "An imported domain renews with the customer's registrar, not here.",
                field="auto_renew",
            )
        term = load_term(container, row)
        if term.auto_renew != auto_renew:
            term.set_auto_renew(auto_renew, container.clock.now())
            container.store.save(term)

    container.unit_of_work.retrying(run)


def update_domain(
    container: Container, principal: Principal, dom_id: str, command: UpdateDomain
) -> DomainOut:
    """`PATCH /domains/{id}`, answered with the domain as the read model shows it after."""
    wanted = None if command.auto_renew is msgspec.UNSET else command.auto_renew
    set_auto_renew(container, principal.tenant, dom_id, wanted)
    container.unit_of_work.wait_for_stored()
    return get_domain(container, principal.tenant, dom_id)
