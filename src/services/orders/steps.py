"""The provisioning steps of an order, as pure functions of the order's state.

Each step returns the order's domains as they are after it (or why it cannot go on). The
worker records one step per event; sandbox orders run every step in memory at once. Steps
only compute: the simulated adapters are deterministic per input, so re-running a step
whose record was lost has no second effect.

Where a step needs partner input it stops with a pending action: `mailboxes` when the
profile picture cannot be fetched, `dns` (given the clock's `now`) while an imported domain's
nameservers are not pointed at us (`nameservers_since` on its item: the import's start).
A bare purchase gets our DNS host's mail records in `register`, since it has no `dns` step.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, TypedDict, cast

from adapters import dns, mailboxes
from domain.order_steps import NAMESERVERS as NAMESERVERS
from domain.order_steps import PROFILE_PICTURE as PROFILE_PICTURE
from domain.order_steps import next_step as next_step
from domain.order_steps import steps_for as steps_for
from domain.orders import BOUGHT_SOURCES, PURCHASE, DomainItem, InboxItem, Order


class ActionRequest(TypedDict):
    """The pending action a step stops with (domain/pending_actions.py `PendingAction`)."""

    kind: str
    field: str
    message: str
    details: dict[str, Any]


@dataclass
class Outcome:
    domains: list[DomainItem] = field(default_factory=list)
    action: ActionRequest | None = None
    failure: str | None = None
    failed_domains: tuple[str, ...] = ()  # the names that caused `failure`, where known


def _register(order: Order, domains: list[DomainItem]) -> Outcome:
    # The picture is the suite's, used at `mailboxes`; a bad one is known from the order
    # itself, so the order waits on the partner before registering any domain, in live as in
    # the sandbox: cancelling it then leaves no domain bought and charged.
    if order.kind != PURCHASE and (action := _picture_action(order)) is not None:
        return Outcome(domains, action=action)
    for item in domains:
        if item["source"] in BOUGHT_SOURCES:
            item["registered"] = True
        if order.kind == PURCHASE and not item.get("dns_records"):
            # A bare purchase has no suite yet: the zone gets our DNS host's records (MX, SPF,
            # DMARC, DKIM); an order using it later sets its suite's records.
            item["dns_records"] = dns.mail_records(item["domain"])
    return Outcome(domains)


def _dns(order: Order, domains: list[DomainItem]) -> Outcome:
    url = order.forwarding_url
    # Decisions 5: a target that does not resolve is not applied; the order still completes
    # (its mail does not depend on it) and each domain reports `domain.forwarding_failed`.
    refused = url is not None and not dns.forwarding_resolves(url)
    for item in domains:
        if not item.get("dns_records"):
            item["dns_records"] = mailboxes.dns_records(item["domain"], item["suite"])
        if refused:  # the domain keeps whatever forwarding it had
            item["forwarding_failure"] = dns.FORWARDING_UNRESOLVABLE
        elif url is not None:
            item["forwarding_url"] = url
            item["forwarding_own"] = False
    return Outcome(domains)


def _picture_action(order: Order) -> ActionRequest | None:
    problem = mailboxes.profile_picture_problem(order.profile_picture_url)
    if problem is None:
        return None
    return {
        "kind": PROFILE_PICTURE,
        "field": "profile_picture_url",
        "message": problem + " Resolve with a public https URL.",
        "details": {"profile_picture_url": order.profile_picture_url},
    }


def _mailboxes(order: Order, domains: list[DomainItem]) -> Outcome:
    if (action := _picture_action(order)) is not None:
        return Outcome(domains, action=action)
    refused = [item["domain"] for item in domains if mailboxes.refuses_domain(item["domain"])]
    if refused:
        return Outcome(
            domains,
            failure=f"The mailbox suite refused {', '.join(refused)}.",
            failed_domains=tuple(refused),
        )
    for item in domains:
        counts = order.shape.get(item["suite"] or "")
        if not item.get("inboxes"):
            inboxes = mailboxes.inboxes_for(
                item["domain"],
                cast(str, item["suite"]),  # an order's item (a purchase has no mailboxes)
                int(counts.get("inboxes_per_domain", 0)) if counts else 0,
                order.personas,
                item.get("taken_addresses", ()),
            )
            item["inboxes"] = cast(list[InboxItem], inboxes)
    return Outcome(domains)


def _sequencer(order: Order, domains: list[DomainItem]) -> Outcome:
    for item in domains:
        for inbox in item.get("inboxes", []):
            inbox["connected"] = True
    return Outcome(domains)


_STEPS = {"register": _register, "dns": _dns, "mailboxes": _mailboxes, "sequencer": _sequencer}


def awaiting_nameservers(domains: list[DomainItem], now: float) -> list[str]:
    """Imported domains whose nameservers the customer has not pointed at us yet."""
    return [
        item["domain"]
        for item in domains
        if item.get("nameservers_since") is not None
        and not dns.nameservers_pointed(item["domain"], item["nameservers_since"], now)
    ]


def _nameservers_action(names: list[str]) -> ActionRequest:
    return {
        "kind": NAMESERVERS,
        "field": "domains",
        "message": (
            f"Set the nameservers of {', '.join(names)} at the registrar, then resolve this "
            "action."
        ),
        "details": {"domains": names, "nameserver_groups": dns.nameserver_groups(names)},
    }


def _run(step: str, order: Order, domains: list[DomainItem], now: float | None) -> Outcome:
    # Our DNS records only count once the zone is delegated to us: wait for the partner.
    if step == "dns" and now is not None and (waiting := awaiting_nameservers(domains, now)):
        return Outcome(domains, action=_nameservers_action(waiting))
    return _STEPS[step](order, copy.deepcopy(domains))


def run_step(step: str, order: Order, now: float | None = None) -> Outcome:
    """One step; `now` (the clock) lets the `dns` step ask whether nameservers are pointed."""
    return _run(step, order, order.domains, now)


def completed_domains(domains: list[DomainItem]) -> list[DomainItem]:
    return [{**item, "status": "active"} for item in domains]


def run_all(order: Order, now: float | None = None) -> Outcome:
    """Every remaining step at once (sandbox): the final domains, or where it stopped."""
    done = list(order.steps_done)
    domains = copy.deepcopy(order.domains)
    for step in steps_for(order):
        if step in done:
            continue
        view = copy.copy(order)
        view.domains = domains
        outcome = _run(step, view, domains, now)
        if outcome.action is not None or outcome.failure is not None:
            return outcome
        domains = outcome.domains
    return Outcome(completed_domains(domains))
