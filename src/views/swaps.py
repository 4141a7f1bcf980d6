"""How a swap looks in responses, lists and webhooks: `SwapOut`, the one definition of the
shape, built from the aggregate by `swap_view`."""

from __future__ import annotations

from typing import Annotated, Literal, cast

import msgspec

from domain.swaps import COMPLETED, PREMIUM, PREMIUM_WARM_DAYS, USER_NAMES, Swap
from infra.clock import iso
from infra.ids import public_id
from schema.vocabulary import Active, Environment, Suite, SwapStatus, SwapType
from views.pages import Links, Meta

# Where a swap leaves the domain it replaces (SwapOut.old_domain_status).
OldDomainStatus = Literal["attached", "warm", "detached"]
NewDomainSource = Literal["inventory", "purchase", "generated"]


def _doc(text: str) -> msgspec.Meta:
    return msgspec.Meta(description=text)


class SwapInbox(msgspec.Struct, kw_only=True):
    address: str
    suite: Suite
    persona: dict[str, str]
    status: Active


class SwapOut(msgspec.Struct, kw_only=True):
    """A domain swap (`swp_`). Stages (each with its event): `created` (`swap.created`),
    `in_progress` (`swap.in_progress`), `completed` (`swap.completed`), `failed`
    (`swap.failed`), `action_required` (`swap.action_required`)."""

    id: Annotated[str, _doc("`swp_` id")]
    type: Annotated[SwapType, _doc("`standard`, `premium` or `user_names`")]
    status: Annotated[
        SwapStatus, _doc("`created`, `in_progress`, `completed`, `failed`, `action_required`")
    ]
    environment: Annotated[Environment, _doc("`test` or `live`, from the key")]
    order_id: Annotated[str, _doc("the order whose domain is swapped")]
    domain: Annotated[str, _doc("the domain replaced (user_names: the domain renamed)")]
    new_domain: Annotated[str | None, _doc("the replacement; null for user_names")]
    new_domain_id: Annotated[str | None, _doc("`dom_` id of the replacement")]
    new_domain_source: Annotated[
        NewDomainSource | None,
        _doc(
            "`inventory` (owned already), `purchase` (named and bought), `generated` (chosen "
            "and bought by the service)"
        ),
    ]
    suite: Annotated[Suite | None, _doc("mailbox suite, the same as the old domain's")]
    personas: Annotated[list[dict[str, str]], _doc("the personas of the inboxes, in order")]
    inboxes: Annotated[list[SwapInbox], _doc("the new inboxes, once provisioned")]
    price_cents: Annotated[int, _doc("registration price of a bought domain; 0 otherwise")]
    charged_cents: Annotated[int, _doc("charged to the live wallet at acceptance")]
    refunded_cents: Annotated[int, _doc("refunded when the swap failed")]
    reason: Annotated[str | None, _doc("why it failed, or what the partner must do")]
    old_domain_status: Annotated[
        OldDomainStatus | None,
        _doc(
            "`attached` until completion, then `warm` (premium, until `warm_until`) or "
            "`detached`; null for user_names"
        ),
    ]
    warm_until: Annotated[
        str | None, _doc(f"premium: when the old domain is detached ({PREMIUM_WARM_DAYS} days)")
    ]
    old_domain_detached_at: Annotated[
        str | None,
        _doc(
            "when the old domain left the order: a standard swap's completion, "
            "a premium swap's end of warm period"
        ),
    ]
    created_at: str
    updated_at: str
    completed_at: str | None


class SwapResponse(msgspec.Struct):
    # Litestar takes no description from a Struct's docstring: carry it on the property.
    data: Annotated[SwapOut, _doc(SwapOut.__doc__ or "")]


class SwapPage(msgspec.Struct):
    data: Annotated[list[SwapOut], _doc(SwapOut.__doc__ or "")]
    links: Links
    meta: Meta


def _iso(ts: float | None) -> str | None:
    return None if ts is None else iso(ts)


def old_domain_status(swap: Swap) -> OldDomainStatus | None:
    """`attached` until the swap completes, then `warm` (premium, until `warm_until`) and
    `detached`; null for a user_names swap, which keeps its domain."""
    if swap.kind == USER_NAMES:
        return None
    if swap.status != COMPLETED:
        return "attached"
    if swap.kind == PREMIUM and swap.old_domain_detached_at is None:
        return "warm"
    return "detached"


def old_domain_detached_at(swap: Swap) -> float | None:
    """A standard swap detaches the old domain as it completes; a premium one at the end of
    its warm period."""
    if swap.kind == PREMIUM:
        return swap.old_domain_detached_at
    return swap.completed_at if old_domain_status(swap) == "detached" else None


def swap_view(swap: Swap) -> SwapOut:
    item = swap.item
    renaming = swap.kind == USER_NAMES
    return SwapOut(
        id=public_id("swp", swap.id),
        type=msgspec.convert(swap.kind, SwapType),
        status=msgspec.convert(swap.status, SwapStatus),
        environment=msgspec.convert(swap.environment, Environment),
        order_id=swap.order_id,
        domain=swap.domain,
        new_domain=None if renaming else item["domain"],
        new_domain_id=None if renaming else item["id"],
        new_domain_source=None if renaming else cast(NewDomainSource, item["source"]),
        suite=item.get("suite"),
        personas=swap.personas,
        inboxes=[
            SwapInbox(
                address=inbox["address"],
                suite=inbox["suite"],
                persona=inbox["persona"],
                status=inbox["status"],
            )
            for inbox in item.get("inboxes", [])
        ],
        price_cents=swap.price_cents,
        charged_cents=swap.charged_cents,
        refunded_cents=swap.refunded_cents,
        reason=swap.reason,
        old_domain_status=old_domain_status(swap),
        warm_until=_iso(swap.warm_until),
        old_domain_detached_at=_iso(old_domain_detached_at(swap)),
        created_at=iso(swap.created_at),
        updated_at=iso(swap.updated_at),
        completed_at=_iso(swap.completed_at),
    )
