"""Swaps (spec 3 Swaps, 4.2, 6; decisions.md 3): replace a domain of an active order, or rename
the personas of a warm domain; list and read swaps."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import anyio
import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.params import Parameter

from domain.errors import invalid
from domain.swaps import KINDS, PREMIUM_WARM_DAYS, STATUSES
from gateway.rest.auth import principal_of
from gateway.rest.idempotency import maybe_idempotent
from gateway.rest.lists import container_of, list_page
from gateway.rest.order_bodies import Persona
from gateway.rest.schema_notes import ResponseDoc
from gateway.rest.wallet import INSUFFICIENT_FUNDS
from schema.rules import documented
from schema.vocabulary import Active, Environment, Suite, SwapStatus, SwapType
from services.swaps.plan import MAX_PERSONAS
from services.swaps.plan import __doc__ as SWAP_RULES
from services.swaps.steps import __doc__ as SWAP_STEPS_RULES
from services.swaps.use_cases import create_swap, get_swap, rename_user_names
from views.pages import Links, Meta
from views.swaps import OldDomainStatus


class SwapBody(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """`POST /swaps`: replace `domain` on order `order_id`."""

    order_id: str
    domain: str
    type: Literal["standard", "premium"]
    new_domain: str | None = None


class UserNamesBody(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """`POST /swaps/user_names`: new personas for the inboxes of a warm domain."""

    domain: str
    personas: Annotated[list[Persona], documented(min_items=1, max_items=MAX_PERSONAS)]


class SwapInbox(msgspec.Struct, kw_only=True):
    address: str
    suite: Suite
    persona: dict[str, str]
    status: Active


def _doc(text: str) -> Any:
    return msgspec.Meta(description=text)


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
        Literal["inventory", "purchase", "generated"] | None,
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


# Documentation only: the handlers check filter values themselves, to answer the spec-7
# envelope with `field`; `schema_extra` puts the allowed values in the OpenAPI document.
StatusFilter = Annotated[str | None, Parameter(schema_extra={"enum": list(STATUSES)})]
KindFilter = Annotated[str | None, Parameter(schema_extra={"enum": list(KINDS)})]


# The shared 404 goes only to paths with an id parameter; this one names an id in its body.
UNKNOWN_ORDER: dict[int, ResponseDoc] = {
    404: ResponseDoc(None, description="not_found: no such order (`field` names it)")
}


class SwapsController(Controller):
    path = "/swaps"
    tags = ["swaps"]

    @post(
        operation_id="createSwap",
        summary="Swap a domain of an active order (standard or premium)",
        description=(
            "`Idempotency-Key` is optional and honoured when sent: send one to retry a live "
            "swap, which may be charged, without a second charge. The new domain gets the same personas and inbox "
            "count and is connected to the order's destination; a `standard` swap detaches the "
            f"old domain at completion, a `premium` one keeps it warm for {PREMIUM_WARM_DAYS} "
            "days, then detaches it. Once completed, the order shows the new domain in place of "
            "the old one (`warm_domains` lists a premium swap's old domain until detached). "
            "The swap answers `created` and goes on asynchronously (`GET /swaps/{id}`, "
            "`swap.*` webhooks): sandbox keys complete within moments, with no charge; live "
            "keys are charged for a bought domain (402 `insufficient_funds`) and provisioned "
            "step by step. A domain purchase has no mailboxes to move: naming one as "
            "`order_id` is 400 `invalid_request`; swap the domain on the order that uses it.\n\n"
            + (SWAP_RULES or "")
            + "\n"
            + (SWAP_STEPS_RULES or "")
        ),
        responses={
            201: ResponseDoc(SwapResponse, description="The swap"),
            **INSUFFICIENT_FUNDS,
            **UNKNOWN_ORDER,
        },
    )
    async def create(self, request: Request[Any, Any, Any], data: SwapBody) -> Response[Any]:
        principal, container = principal_of(request), container_of(request)
        body = msgspec.to_builtins(data)
        return await maybe_idempotent(
            request, lambda: {"data": create_swap(container, principal, body)}
        )

    @post(
        "/user_names",
        operation_id="renameSwapUserNames",
        summary="Rename the personas of a warm domain's inboxes (the domain stays)",
        description=(
            "The domain must be active on a completed order of this key's organization and "
            "environment (404 `not_found` on `domain` otherwise). Its inbox count stays; inboxes "
            "take the personas in turn. A swap of type `user_names` follows the same stages "
            "and events. `Idempotency-Key` is optional and honoured when sent."
        ),
        responses={
            201: ResponseDoc(SwapResponse, description="The swap"),
            404: ResponseDoc(
                None,
                description="not_found: no such domain active on a completed order "
                "(`field` is `domain`)",
            ),
        },
    )
    async def user_names(
        self, request: Request[Any, Any, Any], data: UserNamesBody
    ) -> Response[Any]:
        principal, container = principal_of(request), container_of(request)
        body = msgspec.to_builtins(data)

        return await maybe_idempotent(
            request, lambda: {"data": rename_user_names(container, principal, body)}
        )

    @get(
        operation_id="listSwaps",
        summary="List swaps, newest first",
        description="Filters: `status`, `order_id`, `domain` (the old domain), `type`.",
    )
    async def list_swaps(
        self,
        request: Request[Any, Any, Any],
        status: StatusFilter = None,
        order_id: str | None = None,
        domain: str | None = None,
        type: KindFilter = None,  # noqa: A002 - the public filter's name
        per_page: int | None = None,
        page_token: str | None = None,
    ) -> SwapPage:
        if status is not None and status not in STATUSES:
            raise invalid(f"status must be one of {', '.join(STATUSES)}.", "status")
        if type is not None and type not in KINDS:
            raise invalid(f"type must be one of {', '.join(KINDS)}.", "type")
        name = domain.strip().lower().rstrip(".") if domain else None
        page = list_page(
            request,
            table="swaps",
            where=[
                ("tenant = ?", principal_of(request).tenant),
                ("status = ?", status),
                ("order_id = ?", order_id),
                ("domain = ?", name),
                ("kind = ?", type),
            ],
            filters={"status": status, "order_id": order_id, "domain": name, "type": type},
            per_page=per_page,
            page_token=page_token,
            render=lambda row: json.loads(row["doc"]),
        )
        return msgspec.convert(page, SwapPage)

    @get(
        "/{swap_id:str}",
        operation_id="getSwap",
        summary="One swap",
        description="A swap (`swp_`): the domain replaced or renamed, its replacement, the stage "
        "it is at and, for a premium swap, until when the old domain keeps sending.",
    )
    async def get_one(self, request: Request[Any, Any, Any], swap_id: str) -> SwapResponse:
        principal, container = principal_of(request), container_of(request)
        view = await anyio.to_thread.run_sync(lambda: get_swap(container, principal, swap_id))
        return msgspec.convert({"data": view}, SwapResponse)
