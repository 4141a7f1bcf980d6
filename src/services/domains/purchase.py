"""`POST /domains/purchase`: buy up to 50 domains without inboxes, as an ordinary order.

Each domain costs its TLD's registration price; a live purchase is refused whole with 402
`insufficient_funds` when the wallet cannot cover the sum (nothing is bought or charged). A
sandbox (`pk_test_`) key buys the same way without billing: the purchase completes at once with
synthetic records and its names are held in the sandbox only (they never block a live name).
Invalid names are 400 `invalid_request` and premium ones 400 `premium_domain_not_supported`
(`field` names the item). Names that are taken, held by another organization (availability's
`registered`), already this account's or on an order in progress are refused with 409
`domains_not_submittable`, `details.domains` giving each name with its `reason` (`registered`
or `already_owned`); a concurrent purchase or order that took a name first is reported the
same way. Nothing is charged when any name is refused.

The order's domains carry `provider: null`; the worker's `register` step gives each real mail
DNS records (MX, SPF, DKIM with an RSA key of the deployment's set, DMARC) shown on its `GET /domains/{id}` row;
once it completes they are inventory a later order for the same workspace or customer (or any,
without a workspace) may use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from adapters import registrar
from domain.errors import DomainError, invalid
from domain.orders import PURCHASE, DestinationItem, DomainItem, Order, Price
from projections.domain_lookups import owners_by_name
from projections.orders import domain_rows
from services.accounts.keys import Principal
from services.accounts.workspaces import load_target_workspace
from services.catalog.pricing import price_of, registration_price
from services.domains.claims import DomainsHeld
from services.domains.commands import PurchaseDomains
from services.orders.plan import new_domain_item, normalize_domain
from services.orders.use_cases import accept, placed_before
from views.orders import OrderOut

if TYPE_CHECKING:
    from infra.database import Cursor
    from runtime.container import Container

MAX_DOMAINS = 50


def purchase_domains(
    container: Container, principal: Principal, command: PurchaseDomains
) -> OrderOut:
    """The order placed (`services.orders.use_cases.accept`'s view of it)."""
    if (placed := placed_before(container)) is not None:
        # A retry taking over from an attempt that died after its save: the names it bought
        # are this purchase's own, not `already_owned`.
        return placed
    entries = command.domains
    if not 1 <= len(entries) <= MAX_DOMAINS:
        raise invalid(f"Send 1 to {MAX_DOMAINS} domains.", "domains")
    destination: DestinationItem | None = None
    customer_id = None
    if command.workspace_id is not None:
        workspace = load_target_workspace(
            container, principal.org_id, principal.environment, command.workspace_id
        )
        destination = {
            "workspace_id": command.workspace_id,
            "client_id": None,
            "provider": workspace.provider,
        }
        customer_id = workspace.customer_id
    items: list[DomainItem] = []
    refused: list[dict[str, str]] = []
    for index, entry in enumerate(entries):
        field = f"domains[{index}].domain"
        name = normalize_domain(entry.domain, field)
        if not registrar.is_registrable(name):
            raise invalid(f"{name} is not a name a registry sells (a sub-domain).", field)
        if any(item["domain"] == name for item in items):
            raise invalid(f"{name} is listed twice.", field)
        item = new_domain_item(name, None, "purchase", registration_price(name))
        item["auto_renew"] = entry.auto_renew
        items.append(item)
    with container.read_db.read() as cur:
        owners = owners_by_name(cur, [item["domain"] for item in items], principal.tenant)
        for name, holders in owners.items():
            if (reason := _ownership_refusal(cur, principal.tenant, name, holders)) is not None:
                refused.append({"domain": name, "reason": reason})
    if refused:
        raise DomainError(
            "domains_not_submittable",
            "Some domains cannot be bought; nothing was purchased.",
            field="domains",
            details={"domains": refused},
        )
    price = price_of({}, items)
    try:
        return _accept(container, principal, destination, customer_id, items, price)
    except DomainsHeld as held:  # a concurrent purchase or order took them first
        raise DomainError(
            "domains_not_submittable",
            "Some domains cannot be bought; nothing was purchased.",
            field="domains",
            details={"domains": [_held_reason(n, held) for n in held.names]},
        ) from None


def _held_reason(name: str, held: DomainsHeld) -> dict[str, str]:
    """A name another organization is buying is `registered`; one of ours, `already_owned`."""
    reason = "registered" if name in held.registered else "already_owned"
    return {"domain": name, "reason": reason}


def _ownership_refusal(cur: Cursor, tenant: str, name: str, owners: set[str]) -> str | None:
    """Why this name cannot be bought, as availability (spec 2.5) says it: already this
    account's (on one of its orders, or imported), or registered elsewhere (a `taken` label, or
    another organization of this environment holds it: `owners`)."""
    if tenant in owners or domain_rows(cur, tenant, name):
        return "already_owned"
    if registrar.registry_refusal(name) == registrar.REGISTERED or owners:
        return "registered"
    return None


def _accept(
    container: Container,
    principal: Principal,
    destination: DestinationItem | None,
    customer_id: str | None,
    items: list[DomainItem],
    price: Price,
) -> OrderOut:
    return accept(
        container,
        principal,
        lambda at, charged: Order(
            org_id=principal.org_id,
            environment=principal.environment,
            kind=PURCHASE,
            destination=destination,
            customer_id=customer_id,
            bundle_id=None,
            shape={},
            domains=items,
            personas=[],
            profile_picture_url=None,
            forwarding_url=None,
            price=price,
            charged_cents=charged,
            created_at=at,
        ),
        price["total_cents"],
    )
