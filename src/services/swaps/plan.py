"""Checking a swap request and choosing its new domain, with no side effect.

`POST /swaps` works on a domain of a completed order of the caller's organization and
environment (another tenant's order is 404; a domain not on the order is `invalid_request` on
`domain`). The new domain is the one named in `new_domain`, or chosen by the service when
omitted: free inventory for the order's workspace or customer first, then a new name it
registers (inventory another request took meanwhile is chosen again, never refused). A named
new domain the tenant owns is taken on the terms an order naming it gets: not on an order in
progress (`domain_already_in_active_order`), usable for the old domain's suite beside the
completed orders that use it (`domain_not_usable_for_provider`, spec 2.5), registered (else
`domains_not_submittable`), and not already on this order (`invalid_request`); one it does not
own is bought at its TLD's price when the registry sells it (premium:
`premium_domain_not_supported`; taken: `domains_not_submittable` with `reason: "registered"`).
An imported domain whose nameservers are not pointed yet is accepted: the swap then waits in
`action_required` until they are.
"""

from __future__ import annotations

import copy
import re
import secrets
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from adapters import registrar
from domain.errors import DomainError, NotFound, invalid
from domain.orders import COMPLETED, PURCHASE, DomainItem, Order
from domain.swaps import OPEN_STATES, Swap
from infra.database import Cursor
from infra.ids import parse_id, public_id
from projections.domain_lookups import owners_by_name, tenant_rows_by_name
from projections.orders import domain_rows, owned_free_domains
from schema.vocabulary import Suite
from services.accounts.keys import Principal
from services.catalog.pricing import registration_price
from services.domains.claims import is_taken
from services.orders.commands import MAX_PERSONAS
from services.orders.personas import checked_personas
from services.orders.plan import (
    check_named,
    new_domain_item,
    normalize_domain,
    share_with_completed,
)
from services.pool.leaving import refuse_if_linked
from services.swaps.commands import CreateSwap, RenameSwapUserNames

if TYPE_CHECKING:
    from runtime.container import Container


@dataclass
class SwapPlan:
    order: Order
    old_item: DomainItem
    new_item: DomainItem
    personas: list[dict[str, str]]
    chosen_by_service: bool = False  # inventory the service picked: picked again if taken


def load_tenant_order(container: Container, principal: Principal, order_id: str, field: str) -> Order:
    found = container.store.find(parse_id("ord", order_id), Order)
    if not isinstance(found, Order) or found.tenant != principal.tenant:
        raise NotFound("order", field=field)
    return found


def _live_item(order: Order, name: str, field: str, warm: bool = False) -> DomainItem:
    """The order's item named `name`; with `warm`, a premium swap's kept-warm domain too."""
    for item in order.held_items if warm else order.domains:
        if item["domain"] == name:
            return item
    raise invalid(f"{name} is not a domain of order {public_id('ord', order.id)}.", field)


def personas_of(item: DomainItem) -> list[dict[str, str]]:
    """The persona of each inbox, in order: the new domain gets the same mailboxes."""
    return [dict(inbox["persona"]) for inbox in item.get("inboxes", [])]


def _open_swap_on(container: Container, cur: Cursor, tenant: str, order_id: str, name: str) -> bool:
    """Whether a swap of this domain is still under way. The worker's moves reach the read
    model a moment after they are saved, so the candidates it lists are confirmed on the
    aggregates."""
    marks = ", ".join("?" for _ in OPEN_STATES)
    rows = cur.execute(
        f"SELECT id FROM swaps WHERE tenant = ? AND order_id = ? AND domain = ? "
        f"AND status IN ({marks})",
        (tenant, order_id, name, *OPEN_STATES),
    ).fetchall()
    for row in rows:
        found = container.store.find(parse_id("swp", str(row["id"])), Swap)
        if isinstance(found, Swap) and found.is_open:
            return True
    return False


def _registered(name: str) -> DomainError:
    return DomainError(
        "domains_not_submittable",
        f"{name} is registered by someone else; name another domain or omit new_domain.",
        field="new_domain",
        details={"domains": [{"domain": name, "reason": "registered"}]},
    )


def _named_new_domain(
    container: Container, cur: Cursor, order: Order, name: str, suite: Suite
) -> DomainItem:
    field = "new_domain"
    tenant = order.tenant
    rows = domain_rows(cur, tenant, name)
    if rows:
        refuse_if_linked(container, order.org_id, order.environment, name, field)
        # On the terms an order naming it gets: refused while an order sets it up or tears it
        # down, or when the suites completed orders use it for exclude this one (spec 2.5).
        latest = check_named(rows, name, suite, field)
        item = new_domain_item(name, suite, "inventory", 0, latest["dom_id"])
        share_with_completed(cur, item, rows)
        return item
    owned = tenant_rows_by_name(cur, tenant, [name])
    if owned:
        latest = owned[-1]
        waiting = latest["status"] == "action_required" and latest["category"] == "inventory"
        if latest["status"] != "available" and not waiting:
            raise DomainError(
                "domains_not_submittable",
                f"{name} is not ready for a swap (its status is {latest['status']}).",
                field=field,
                details={"domains": [{"domain": name, "reason": f"domain_{latest['status']}"}]},
            )
        return new_domain_item(name, suite, "inventory", 0, str(latest["id"]))
    if registrar.registry_refusal(name) == registrar.REGISTERED:
        raise _registered(name)
    if owners_by_name(cur, [name], tenant)[name]:
        raise _registered(name)
    return new_domain_item(name, suite, "purchase", registration_price(name))


def _chosen_new_domain(
    container: Container, cur: Cursor, order: Order, old: DomainItem, suite: Suite,
    exclude: Collection[str], pick_inventory: bool,
) -> DomainItem:
    workspace_id = order.destination["workspace_id"] if order.destination else None
    on_order = {item["domain"] for item in [*order.domains, *order.warm_domains]}
    if pick_inventory:
        for row in owned_free_domains(cur, order.tenant, workspace_id, order.customer_id):
            name = row["domain"]
            # The read models show a name on an order only once a swap bringing it completes.
            if name in on_order or name in exclude:
                continue
            if not is_taken(container, order.org_id, order.environment, name):
                return new_domain_item(name, suite, "inventory", 0, row["dom_id"])
    base = re.sub(r"[^a-z0-9]", "", old["domain"].split(".", 1)[0]).replace("taken", "")[:16]
    # Led by `get`, as generated order names are: a label the old one began (`premium...`,
    # `mailfail...`) would make the registry or a suite refuse the name, or price it as premium.
    name = f"get{base or 'mail'}{secrets.token_hex(3)}.com"
    return new_domain_item(name, suite, "generated", registration_price(name))


def plan_swap(
    container: Container, principal: Principal, command: CreateSwap,
    exclude: Collection[str] = (), pick_inventory: bool = True,
) -> SwapPlan:
    """The checked swap; `exclude` names inventory not to choose (other requests took it
    meanwhile); without `pick_inventory` a new domain not named is a new name."""
    order = load_tenant_order(container, principal, command.order_id, "order_id")
    if order.kind == PURCHASE:
        # A swap moves a domain's mailboxes to another domain; a purchase has none, and its
        # domains may serve another order, whose swap is the one to ask for.
        raise invalid(
            f"Order {public_id('ord', order.id)} is a domain purchase, with no mailboxes to "
            "move; swap the domain on the order that uses it.",
            "order_id",
        )
    if order.status != COMPLETED:
        raise DomainError(
            "order_state_conflict",
            f"Only domains of a completed order can be swapped (this one is {order.status}).",
            field="order_id",
            details={"status": order.status},
        )
    old_name = registrar.normalize(command.domain)
    old = _live_item(order, old_name, "domain")
    suite: Suite = old.get("suite") or "suite_a"
    with container.read_db.read() as cur:
        if _open_swap_on(container, cur, order.tenant, public_id("ord", order.id), old_name):
            raise DomainError(
                "conflict", f"A swap of {old_name} is already under way.", field="domain"
            )
        sent = command.new_domain
        if sent is None:
            new = _chosen_new_domain(
                container, cur, order, old, suite, exclude, pick_inventory
            )
        else:
            name = normalize_domain(sent, "new_domain")
            if name in {i["domain"] for i in [*order.domains, *order.warm_domains]}:
                raise invalid(f"{name} is already on this order.", "new_domain")
            new = _named_new_domain(container, cur, order, name, suite)
        # The order's forwarding goes on with the new domain; without one, a domain that
        # forwarded on its own (set while in inventory) keeps doing so, in both views.
        # (The old domain's own forwarding, set before the order, is not the order's.)
        carried = None if old.get("forwarding_own") else old.get("forwarding_url")
        own, auto_renew, origin = _owned_facts(cur, new["id"])
        new["forwarding_url"] = carried or own
        new["forwarding_own"] = carried is None and own is not None
        if auto_renew is not None:  # an owned domain keeps its renewal choice (an import: off)
            new["auto_renew"] = auto_renew
        if origin is not None:  # `source` in webhooks as `GET /domains` says it
            new["origin"] = origin
    chosen = sent is None and new["source"] == "inventory"
    return SwapPlan(order, old, new, personas_of(old), chosen_by_service=chosen)


def _owned_facts(cur: Cursor, dom_id: str) -> tuple[str | None, bool | None, str | None]:
    """An owned domain's own forwarding URL, renewal choice and source (how the account came
    by it); all None for a new name."""
    row = cur.execute(
        "SELECT forwarding_url, auto_renew, source FROM domains WHERE id = ?", (dom_id,)
    ).fetchone()
    if row is None:
        return None, None, None
    forwarding = str(row["forwarding_url"]) if row["forwarding_url"] else None
    return forwarding, bool(row["auto_renew"]), str(row["source"])


def plan_rename(
    container: Container, principal: Principal, command: RenameSwapUserNames
) -> SwapPlan:
    """`POST /swaps/user_names`: the warm (active, connected) domain named, on a completed
    order of this tenant (one of its domains, or the old domain a premium swap keeps warm),
    gets new personas on the same number of inboxes."""
    name = registrar.normalize(command.domain)
    if not command.personas:
        raise invalid(f"Send 1 to {MAX_PERSONAS} personas.", "personas")
    cleaned = checked_personas(command.personas)
    with container.read_db.read() as cur:
        on_orders = [r for r in domain_rows(cur, principal.tenant, name) if r["kind"] == "order"]
        rows = [r for r in on_orders if r["status"] == COMPLETED]
        if not rows and on_orders:
            # Its order exists, in a state no rename applies to: as `POST /swaps` answers.
            status = str(on_orders[-1]["status"])
            raise DomainError(
                "order_state_conflict",
                f"Only domains of a completed order can be renamed ({name}'s order is {status}).",
                field="domain",
                details={"status": status},
            )
        if not rows:
            raise NotFound("live domain on a completed order", field="domain")
        order_id = str(rows[-1]["order_id"])
        if _open_swap_on(container, cur, principal.tenant, order_id, name):
            raise DomainError("conflict", f"A swap of {name} is already under way.", field="domain")
    order = load_tenant_order(container, principal, order_id, "domain")
    old = _live_item(order, name, "domain", warm=True)
    if old.get("status") != "active":
        raise DomainError(
            "conflict", f"{name} is not live (its status is {old.get('status')}).", field="domain"
        )
    return SwapPlan(order=order, old_item=old, new_item=copy.copy(old), personas=cleaned)
