"""The provisioning steps of an order, as pure functions of the order's state.

Each step returns the order's domains as they are after it (or why it cannot go on). The
worker records one step per event; sandbox orders run every step in memory at once. Steps
only compute: the simulated adapters are deterministic per input, so re-running a step
whose record was lost has no second effect.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from adapters import mailboxes
from domain.orders import PURCHASE, Order

ORDER_STEPS = ("register", "dns", "mailboxes", "sequencer")
PURCHASE_STEPS = ("register",)


@dataclass
class Outcome:
    domains: list[dict[str, Any]] = field(default_factory=list)
    action: dict[str, Any] | None = None  # kind, field, message, details
    failure: str | None = None


def steps_for(order: Order) -> tuple[str, ...]:
    return PURCHASE_STEPS if order.kind == PURCHASE else ORDER_STEPS


def next_step(order: Order) -> str | None:
    for step in steps_for(order):
        if step not in order.steps_done:
            return step
    return None


def _register(order: Order, domains: list[dict[str, Any]]) -> Outcome:
    for item in domains:
        if item["source"] in ("generated", "purchase"):
            item["registered"] = True
    return Outcome(domains)


def _dns(order: Order, domains: list[dict[str, Any]]) -> Outcome:
    for item in domains:
        if not item.get("dns_records"):
            item["dns_records"] = mailboxes.dns_records(item["domain"], item["suite"])
        item["forwarding_url"] = order.forwarding_url
    return Outcome(domains)


def _mailboxes(order: Order, domains: list[dict[str, Any]]) -> Outcome:
    problem = mailboxes.profile_picture_problem(order.profile_picture_url)
    if problem is not None:
        return Outcome(
            domains,
            action={
                "kind": "profile_picture_url",
                "field": "profile_picture_url",
                "message": problem + " Resolve with a public https URL.",
                "details": {"profile_picture_url": order.profile_picture_url},
            },
        )
    refused = [item["domain"] for item in domains if mailboxes.refuses_domain(item["domain"])]
    if refused:
        return Outcome(domains, failure=f"The mailbox suite refused {', '.join(refused)}.")
    for item in domains:
        counts = order.shape.get(item["suite"] or "", {})
        if not item.get("inboxes"):
            item["inboxes"] = mailboxes.inboxes_for(
                item["domain"],
                item["suite"],
                int(counts.get("inboxes_per_domain", 0)),
                order.personas,
            )
    return Outcome(domains)


def _sequencer(order: Order, domains: list[dict[str, Any]]) -> Outcome:
    for item in domains:
        for inbox in item.get("inboxes", []):
            inbox["connected"] = True
    return Outcome(domains)


_STEPS = {"register": _register, "dns": _dns, "mailboxes": _mailboxes, "sequencer": _sequencer}


def run_step(step: str, order: Order) -> Outcome:
    return _STEPS[step](order, copy.deepcopy(order.domains))


def completed_domains(domains: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**item, "status": "active"} for item in domains]


def run_all(order: Order) -> Outcome:
    """Every remaining step at once (sandbox): the final domains, or where it stopped."""
    done = list(order.steps_done)
    domains = copy.deepcopy(order.domains)
    for step in steps_for(order):
        if step in done:
            continue
        view = copy.copy(order)
        view.domains = domains
        outcome = _STEPS[step](view, copy.deepcopy(domains))
        if outcome.action is not None or outcome.failure is not None:
            return outcome
        domains = outcome.domains
    return Outcome(completed_domains(domains))
