"""The provisioning steps of a swap, as pure functions of the swap's state.

A standard or premium swap runs `register` (a bought name), `dns`, `mailboxes` (the same
personas and inbox count as the old domain) and `sequencer` (connected to the order's
destination); a `user_names` swap only `mailboxes` and `sequencer`. The outside world answers
through the simulators: a new domain the mailbox suite refuses (first label `mailfail`) fails
the swap; an imported new domain whose nameservers are not pointed yet (`nsslow`, `nsnever`)
holds it in `action_required` until they are.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import cast

from adapters import mailboxes
from domain.orders import DomainItem, InboxItem
from domain.swaps import USER_NAMES, Swap

SWAP_STEPS = ("register", "dns", "mailboxes", "sequencer")
RENAME_STEPS = ("mailboxes", "sequencer")
NAMESERVERS_NOT_POINTED = "nameservers_not_pointed"


@dataclass
class Outcome:
    item: DomainItem
    action: str | None = None  # why the partner must act
    failure: str | None = None


def steps_for(swap: Swap) -> tuple[str, ...]:
    return RENAME_STEPS if swap.kind == USER_NAMES else SWAP_STEPS


def next_step(swap: Swap) -> str | None:
    for step in steps_for(swap):
        if step not in swap.steps_done:
            return step
    return None


def _register(swap: Swap, item: DomainItem, pointed: bool) -> Outcome:
    if item["source"] in ("generated", "purchase"):
        item["registered"] = True
    return Outcome(item)


def _dns(swap: Swap, item: DomainItem, pointed: bool) -> Outcome:
    if not pointed:
        return Outcome(
            item,
            action=f"Point the nameservers of {item['domain']} (see its import job); the swap "
            "goes on once they resolve.",
        )
    item["dns_records"] = mailboxes.dns_records(item["domain"], item["suite"])
    return Outcome(item)


def _mailboxes(swap: Swap, item: DomainItem, pointed: bool) -> Outcome:
    if mailboxes.refuses_domain(item["domain"]):
        return Outcome(item, failure=f"The mailbox suite refused {item['domain']}.")
    # A rename keeps the domain's inbox count; a new domain gets one inbox per old inbox.
    count = len(item.get("inboxes") or []) or len(swap.personas)
    inboxes = mailboxes.inboxes_for(
        item["domain"], cast(str, item["suite"]), count, swap.personas,
        item.get("taken_addresses", ()),  # a name other orders send from too
    )
    item["inboxes"] = cast(list[InboxItem], inboxes)
    return Outcome(item)


def _sequencer(swap: Swap, item: DomainItem, pointed: bool) -> Outcome:
    for inbox in item.get("inboxes", []):
        inbox["connected"] = True
    return Outcome(item)


_STEPS = {"register": _register, "dns": _dns, "mailboxes": _mailboxes, "sequencer": _sequencer}


def run_step(step: str, swap: Swap, pointed: bool = True) -> Outcome:
    return _STEPS[step](swap, copy.deepcopy(swap.item), pointed)


def live_item(item: DomainItem) -> DomainItem:
    return {**item, "status": "active"}


def run_all(swap: Swap, pointed: bool = True) -> Outcome:
    """Every remaining step at once (sandbox): the final item, or where it stopped."""
    item = copy.deepcopy(swap.item)
    for step in steps_for(swap):
        if step in swap.steps_done:
            continue
        outcome = _STEPS[step](swap, copy.deepcopy(item), pointed)
        if outcome.action is not None or outcome.failure is not None:
            return outcome
        item = outcome.item
    return Outcome(live_item(item))
