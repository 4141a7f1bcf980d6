"""Checking an order body and pricing it, with no side effect (shared by orders and quotes).

Named domains (`domains`) must be owned by the tenant already: bought with
`POST /domains/purchase`, or released by a cancelled or failed order; others are
`domain_not_imported`. A name only failed orders ever had (each bought it and refunded it) is
bought again at its registration price. A named domain on an order still being set up or torn down is
`domain_already_in_active_order`; one whose current suites exclude the requested suite
(usable_for table of spec 2.5) is `domain_not_usable_for_provider`; one whose purchase has not
finished or failed is `domains_not_submittable`. Per suite, named domains must number exactly
the suite's domain count (`domain_count_mismatch`); suites with no named domains are filled from
free inventory for the same workspace or customer (never a domain whose last order failed: it
shows `failed` until the partner names it again), then with new names the service registers.
The read models answer these checks; the placement lock (`services.domains.claims`) settles
orders that race for the same name.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from adapters import registrar
from adapters.sequencers import sequencers_of
from domain.domains import NAMESERVERS_NOT_POINTED, usable_for
from domain.errors import DomainError, invalid
from domain.orders import (
    BUSY_STATES,
    COMPLETED,
    FAILED,
    DestinationItem,
    DomainItem,
    ItemSource,
    OrderShape,
    Price,
)
from domain.workspaces import Workspace
from infra.ids import new_id, public_id
from projections.domain_lookups import tenant_rows_by_name
from projections.orders import domain_rows, inbox_addresses, owned_free_domains
from schema.vocabulary import Suite
from services.accounts.workspaces import EMAIL, check_client, load_target_workspace
from services.catalog.bundles import load_bundle
from services.catalog.pricing import price_of, registration_price
from services.orders.commands import (
    MAX_DOMAINS_PER_SUITE,
    MAX_INBOXES_PER_DOMAIN,
    Destination,
    NamedDomain,
    PlaceOrder,
    SuiteCounts,
)
from services.orders.personas import checked_personas
from webhooks.urls import FORWARDING_URL, check_forwarding_target

if TYPE_CHECKING:
    from infra.database import Cursor, Row
    from runtime.container import Container

SUITES = ("suite_a", "suite_b")


@dataclass
class Plan:
    destination: DestinationItem
    workspace: Workspace
    customer_id: str | None
    bundle_id: str | None
    shape: OrderShape
    domains: list[DomainItem]
    price: Price
    personas: list[dict[str, str]]  # checked and trimmed


def normalize_domain(value: str, field: str) -> str:
    """The name as the registrar sees it; invalid names and premium ones are refused here."""
    name = registrar.normalize(value)
    refusal = registrar.registry_refusal(name)
    if refusal == registrar.INVALID:
        raise invalid(f"'{value}' is not a valid domain name with a sellable TLD.", field)
    if refusal == registrar.PREMIUM:
        raise DomainError(
            "premium_domain_not_supported",
            f"{name} is a premium domain; premium names cannot be ordered.",
            field=field,
        )
    return name


def new_domain_item(
    name: str, suite: Suite | None, source: ItemSource, price: int, dom_id: str | None = None
) -> DomainItem:
    return {
        "id": dom_id or public_id("dom", new_id()),
        "domain": name,
        "suite": suite,
        "source": source,
        "price_cents": price,
        "auto_renew": True,
        "status": "in_progress",
        "inboxes": [],
        "dns_records": [],
        "forwarding_url": None,
    }


def _shape(
    container: Container, org_id: str, env: str, command: PlaceOrder
) -> tuple[OrderShape, str | None]:
    sent = {"suite_a": command.suite_a, "suite_b": command.suite_b}
    counts: dict[str, SuiteCounts] = {s: c for s, c in sent.items() if c is not None}
    bundle_id = command.bundle_id
    if bundle_id is not None and counts:
        raise DomainError(
            "order_shape_conflict",
            "Send either bundle_id or suite_a/suite_b counts, not both.",
            field="bundle_id",
        )
    if bundle_id is None and not counts:
        raise DomainError(
            "order_shape_conflict", "Send bundle_id or suite_a/suite_b counts.", field="bundle_id"
        )
    if bundle_id is not None:
        bundle = load_bundle(container, org_id, env, bundle_id)
        if not bundle.is_active:
            # The same conflict with the bundle's state as editing it (PATCH /bundles/{id}).
            raise DomainError(
                "bundle_archived", "An archived bundle cannot be ordered.", field="bundle_id"
            )
        shape: OrderShape = {
            "suite_a": {
                "domains": bundle.required_domains.get("suite_a", 0),
                "inboxes_per_domain": bundle.suite_a_licenses,
            },
            "suite_b": {
                "domains": bundle.required_domains.get("suite_b", 0),
                "inboxes_per_domain": bundle.suite_b_inboxes_per_domain,
            },
        }
        for suite, needs in shape.items():
            if needs["domains"] > MAX_DOMAINS_PER_SUITE:
                raise invalid(
                    f"The bundle needs {needs['domains']} {suite} domains; an order holds at "
                    f"most {MAX_DOMAINS_PER_SUITE} per suite. Order it in parts with custom counts.",
                    "bundle_id",
                )
        return {s: c for s, c in shape.items() if c["domains"]}, bundle_id
    shape = {}
    for suite, given in counts.items():
        domains, per = given.domains, given.inboxes_per_domain
        if not 0 <= domains <= MAX_DOMAINS_PER_SUITE:
            raise invalid(f"domains must be 0..{MAX_DOMAINS_PER_SUITE}.", f"{suite}.domains")
        if not 1 <= per <= MAX_INBOXES_PER_DOMAIN:
            raise invalid(
                f"inboxes_per_domain must be 1..{MAX_INBOXES_PER_DOMAIN}.",
                f"{suite}.inboxes_per_domain",
            )
        if domains:
            shape[suite] = {"domains": domains, "inboxes_per_domain": per}
    if not shape:
        # The field the partner sent (`suite_b` alone), else where a count goes.
        first = next(iter(counts), "suite_a")
        raise invalid("An order needs at least one domain.", f"{first}.domains")
    return shape, None


def _destination(
    container: Container,
    org_id: str,
    env: str,
    sent: Destination,
    shape: OrderShape,
    check_login: bool,
) -> tuple[DestinationItem, Workspace]:
    workspace = load_target_workspace(
        container, org_id, env, sent.workspace_id, "destination.workspace_id"
    )
    client_id = sent.client_id
    if client_id is not None:
        check_client(workspace, client_id)
    email, password = sent.email, sent.password
    if (email is not None or password is not None) and workspace.provider != "i":
        raise invalid(
            "Orders never accept a login pair, except on a kind i destination.",
            "destination.email" if email is not None else "destination.password",
        )
    if (email is None) != (password is None):
        missing = "destination.password" if password is None else "destination.email"
        raise DomainError(  # the workspace's pair answers the same code (`credentials.*`)
            "provider_login_credentials_required",
            "destination.email and destination.password go together.",
            field=missing,
        )
    if email is not None and not EMAIL.match(email):
        raise invalid("destination.email is not an email address.", "destination.email")
    if check_login and email is not None and password is not None:
        sequencers_of(container).check_login(
            workspace.provider, email, password, "destination.password"
        )
    if workspace.provider == "m" and "suite_b" in shape and not workspace.has_login_pair:
        raise DomainError(
            "provider_login_credentials_required",
            "suite_b orders into a kind m workspace need its saved login pair; "
            "add it with PATCH /workspaces/{id}.",
            field="destination.workspace_id",
        )
    destination: DestinationItem = {
        "workspace_id": public_id("wrk", workspace.id),
        "client_id": client_id,
        "provider": workspace.provider,
    }
    if email is not None:
        destination["login_sealed"] = container.sealer.seal({"email": email, "password": password})
    return destination, workspace


def refuse_unfinished_purchase(latest: Row, name: str, field: str) -> None:
    """A domain whose purchase has not completed is not registered yet: nothing may use it."""
    if latest["kind"] == "purchase" and latest["status"] != COMPLETED:
        raise DomainError(
            "domains_not_submittable",
            f"{name} is not registered yet (its purchase is {latest['status']}).",
            field=field,
            details={"domains": [{"domain": name, "reason": "not_registered_yet"}]},
        )


def check_named(rows: list[Row], name: str, suite: str, field: str) -> Row:
    """The latest row of a named domain the tenant's orders had, if another order may use it
    for `suite` now; else the refusal."""
    if not rows:
        raise DomainError(
            "domain_not_imported",
            f"{name} is not in this account's inventory; import or purchase it first.",
            field=field,
        )
    if any(r["kind"] == "order" and r["status"] in BUSY_STATES for r in rows):
        raise DomainError(
            "domain_already_in_active_order",
            f"{name} is on an order that is still in progress.",
            field=field,
        )
    latest = rows[-1]
    refuse_unfinished_purchase(latest, name, field)
    usable = usable_for(_completed_users(rows))
    if suite not in usable:
        raise DomainError(
            "domain_not_usable_for_provider",
            f"{name} already serves suite_b; it can be used for {', '.join(usable)} only.",
            field=field,
            details={"usable_for": usable},
        )
    return latest


def share_with_completed(cur: Cursor, item: DomainItem, order_rows: list[Row]) -> None:
    """A name completed orders already send from: who else uses it decides its `usable_for`
    (spec 2.5) in the `domain.connected` the new holder fires, which is built from the item
    alone, and the mailboxes it gets must not take their addresses."""
    item["shared_with"] = sorted(_completed_users(order_rows))
    in_use = [r["order_id"] for r in _completed(order_rows)]
    taken = inbox_addresses(cur, in_use, str(item["domain"]))
    if taken:
        item["taken_addresses"] = taken


def _never_owned(order_rows: list[Row], import_rows: list[Row]) -> bool:
    """Whether only failed orders ever had this name, each buying it (and refunding its
    registration, `Order.fail`): it was never the organization's. A name bought or imported
    before it broke an order has a row that says so."""
    imported = any(row["source"] == "imported" for row in import_rows)
    return not imported and all(
        row["kind"] == "order" and row["status"] == FAILED for row in order_rows
    )


def _completed(rows: list[Row]) -> list[Row]:
    """The rows of completed orders (not purchases) that use the domain."""
    return [r for r in rows if r["kind"] == "order" and r["status"] == COMPLETED]


def _completed_users(rows: list[Row]) -> set[str]:
    return {r["suite"] for r in _completed(rows)}


def _imported_domain(rows: list[Row], name: str, field: str) -> Row:
    """A domain imported (or registered) into inventory but never on an order: usable once its
    setup is done, or while only its nameservers are not pointed yet (the order then waits for
    them in its `dns` step); it keeps its dom_ id on the order."""
    if not rows:
        check_named([], name, "suite_a", field)  # raises domain_not_imported
    latest: Row = rows[-1]
    waiting = latest["status"] == "action_required" and latest["reason"] == NAMESERVERS_NOT_POINTED
    if latest["status"] != "available" and not waiting:
        raise DomainError(
            "domains_not_submittable",
            f"{name} is not ready for an order (its status is {latest['status']}).",
            field=field,
            details={"domains": [{"domain": name, "reason": f"domain_{latest['status']}"}]},
        )
    return latest


def _generated_name(workspace: Workspace) -> str:
    base = re.sub(r"[^a-z0-9]", "", workspace.name.lower()).replace("taken", "")[:20] or "mail"
    return f"get{base}{secrets.token_hex(3)}.com"


def _check_named_shape(named: list[NamedDomain], shape: OrderShape) -> list[str]:
    """The body's own consistency (names unique, per-suite counts) before any lookup, so a
    shape error is reported as such whatever the domains' ownership. Returns the normalized
    names, in the body's order."""
    names: list[str] = []
    for index, entry in enumerate(named):
        field = f"domains[{index}].domain"
        name = normalize_domain(entry.domain, field)
        if name in names:
            raise invalid(f"{name} is named twice.", field)
        names.append(name)
        suite: str = entry.suite
        if suite not in shape:
            raise DomainError(
                "domain_count_mismatch",
                f"{name} is named for {suite}, but the order has no {suite} domains.",
                field=f"domains[{index}].suite",
                details={"suite": suite, "expected": 0},
            )
    for suite, counts in shape.items():
        given = sum(1 for entry in named if entry.suite == suite)
        if given and given != counts["domains"]:
            raise DomainError(
                "domain_count_mismatch",
                f"{given} {suite} domains named, but the order has {counts['domains']}.",
                field="domains",
                details={"suite": suite, "expected": counts["domains"], "named": given},
            )
    return names


def _domains(
    container: Container,
    tenant: str,
    named: list[NamedDomain],
    shape: OrderShape,
    workspace: Workspace,
    exclude: Collection[str],
    pick_inventory: bool = True,
) -> list[DomainItem]:
    items: list[DomainItem] = []
    names = _check_named_shape(named, shape)
    with container.read_db.read() as cur:
        for index, (entry, name) in enumerate(zip(named, names, strict=True)):
            field = f"domains[{index}].domain"
            suite: Suite = entry.suite
            # Each statement reads what is committed when it runs, and the projections commit
            # an order's rows with the domain status the order causes. Reading the import first
            # means a commit in between shows the order (refused as held), never the status
            # alone (which would read as not submittable).
            import_rows = tenant_rows_by_name(cur, tenant, [name])
            order_rows = domain_rows(cur, tenant, name)
            if order_rows:
                dom_id = check_named(order_rows, name, suite, field)["dom_id"]
                if _never_owned(order_rows, import_rows):
                    # Failed orders bought it and refunded it: naming it buys it again.
                    price = registration_price(name)
                    items.append(new_domain_item(name, suite, "purchase", price, dom_id))
                    continue
                item = new_domain_item(name, suite, "named", 0, dom_id)
                share_with_completed(cur, item, order_rows)
                items.append(item)
                continue
            imported = _imported_domain(import_rows, name, field)
            items.append(new_domain_item(name, suite, "named", 0, str(imported["id"])))
        free = owned_free_domains(
            cur, tenant, public_id("wrk", workspace.id), workspace.customer_id
        )
        free = [
            row for row in free
            if pick_inventory and row["domain"] not in names and row["domain"] not in exclude
        ]
        for key, counts in shape.items():
            suite = cast(Suite, key)  # an order shape is keyed by suite (`_shape`)
            missing = counts["domains"] - sum(1 for item in items if item["suite"] == suite)
            while missing > 0 and free:
                row = free.pop(0)
                items.append(new_domain_item(row["domain"], suite, "inventory", 0, row["dom_id"]))
                missing -= 1
            for _ in range(missing):
                name = _generated_name(workspace)
                items.append(new_domain_item(name, suite, "generated", registration_price(name)))
        _owned_domain_facts(cur, items)
    return items


def _owned_domain_facts(cur: Cursor, items: list[DomainItem]) -> None:
    """What an owned domain brings to the order that uses it: its renewal choice (a purchase's
    `auto_renew: false`, spec 4.2, kept after the order releases it), its forwarding, and for
    an imported domain the start of its import, from which the simulated DNS decides whether
    its nameservers point at us. However the order came by it (named, picked from inventory,
    released by an earlier order), its `dns` step waits until they do."""
    ids = [item["id"] for item in items if item["source"] != "generated"]
    if not ids:
        return
    marks = ", ".join("?" for _ in ids)
    rows = cur.execute(
        f"SELECT id, auto_renew, source, created_at, forwarding_url FROM domains "
        f"WHERE id IN ({marks})",
        tuple(ids),
    ).fetchall()
    by_id = {row["id"]: row for row in rows}
    for item in items:
        row = by_id.get(item["id"])
        if row is None:
            continue
        item["auto_renew"] = bool(row["auto_renew"])
        item["origin"] = row["source"]
        # Forwarding set on the domain itself goes on unless the order sets its own (the
        # `dns` step), so the order and `GET /domains` show one URL.
        item["forwarding_url"] = row["forwarding_url"]
        item["forwarding_own"] = row["forwarding_url"] is not None  # not the order's to pass on
        if row["source"] == "imported":
            item.setdefault("nameservers_since", row["created_at"])


def plan_order(
    container: Container,
    org_id: str,
    environment: str,
    command: PlaceOrder,
    *,
    exclude: Collection[str] = (),
    pick_inventory: bool = True,
    placing: bool = True,
) -> Plan:
    """The checked, priced order; `exclude` names inventory not to pick (taken meanwhile),
    `pick_inventory` False picks none (new names are bought instead). A quote (`placing`
    False) does not try the login pair with the provider: a `limited` key could otherwise
    test passwords against the customer's sequencer account."""
    shape, bundle_id = _shape(container, org_id, environment, command)
    destination, workspace = _destination(
        container, org_id, environment, command.destination, shape, check_login=placing
    )
    tenant = f"{org_id}:{environment}"
    domains = _domains(
        container, tenant, command.domains or [], shape, workspace, exclude, pick_inventory
    )
    personas = checked_personas(command.personas or [])
    # No syntax check on profile_picture_url: spec 3 sends an order with a private or invalid
    # picture URL to `action_required` (a pending action), not to a 400.
    url = command.forwarding_url
    if url is not None:
        if not FORWARDING_URL.match(url):
            raise invalid("forwarding_url must be an http(s) URL.", "forwarding_url")
        check_forwarding_target(url, "forwarding_url", container.settings.allow_http_webhooks)
    return Plan(
        destination=destination,
        workspace=workspace,
        customer_id=workspace.customer_id,
        bundle_id=bundle_id,
        shape=shape,
        domains=domains,
        price=price_of(shape, domains),
        personas=personas,
    )
