"""The dicts an order carries and stores in its events (`Order.domains`, `destination`, `shape`,
`price`), typed. At run time they are plain dicts: stored events never change shape."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

from schema.vocabulary import Active, Suite

# Where an order's domain comes from: chosen and bought by the service, named and bought,
# named and already the organization's, taken from its inventory.
ItemSource = Literal["generated", "purchase", "named", "inventory"]
ITEM_SOURCES: tuple[ItemSource, ...] = ("generated", "purchase", "named", "inventory")
# Item sources the order registers itself (the others were already the organization's).
BOUGHT_SOURCES = ("generated", "purchase")


class InboxItem(TypedDict):
    """One inbox on a domain item (adapters/mailboxes.py `inboxes_for`)."""

    address: str
    suite: Suite
    persona: dict[str, str]
    status: Active
    connected: NotRequired[bool]  # set once the sequencer step connected it


class DomainItem(TypedDict):
    """One domain of an order (`Order.domains`, `Order.warm_domains`) or a swap's new domain
    (`Swap.item`), as its events store it. Keys not always present are `NotRequired`: orders
    stored before a key existed lack it, and the steps add theirs as they run."""

    id: str
    domain: str
    suite: Suite | None  # None on a purchase
    source: ItemSource
    price_cents: int
    auto_renew: bool
    status: str
    inboxes: list[InboxItem]
    dns_records: list[dict[str, Any]]
    forwarding_url: str | None
    forwarding_own: NotRequired[bool]  # False once a forwarding job set the URL
    forwarding_failure: NotRequired[str]  # the order's forwarding URL did not resolve
    registered: NotRequired[bool]  # set by the `register` step
    nameservers_since: NotRequired[float]  # an imported domain: its import's start
    warm_until: NotRequired[float]  # a premium swap's old domain, kept sending until then
    swap_id: NotRequired[str]  # the swap that replaced it (warm or detached)
    shared_with: NotRequired[list[str]]  # a named domain: the suites it already serves
    taken_addresses: NotRequired[list[str]]  # a named domain: mailboxes other orders hold
    origin: NotRequired[str]  # an owned domain: how it came into inventory (its `source`)
    kept_by_another: NotRequired[bool]  # a cancelled order's name another order still uses


class SuiteShape(TypedDict):
    domains: int
    inboxes_per_domain: int


# Domains and licenses per suite (`suite_a`, `suite_b`) an order was placed for.
OrderShape = dict[str, SuiteShape]


def license_count(shape: OrderShape, suite: str) -> int:
    """The suite's licenses: one per inbox (0 where the order has none of the suite)."""
    counts = shape.get(suite)
    return int(counts.get("domains", 0)) * int(counts.get("inboxes_per_domain", 0)) if counts else 0


class DestinationItem(TypedDict):
    """The workspace an order's domains go to."""

    workspace_id: str
    client_id: int | None
    provider: str
    login_sealed: NotRequired[str]  # a kind i destination's sealed login pair


class PriceLine(TypedDict):
    type: Literal["license", "domain_registration"]
    suite: NotRequired[Suite]  # a license line
    domain: NotRequired[str]  # a domain_registration line
    quantity: int
    unit_price_cents: int
    amount_cents: int


class Price(TypedDict):
    """An order's price breakdown (services/catalog/pricing.py `price_of`)."""

    currency: str
    total_cents: int
    lines: list[PriceLine]
