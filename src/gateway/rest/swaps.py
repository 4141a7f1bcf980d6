"""Swaps (spec 3 Swaps, 4.2, 6; decisions.md 3): replace a domain of an active order, or rename
the personas of a warm domain; list and read swaps."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.params import Parameter

from domain.errors import invalid
from domain.swaps import KINDS, PREMIUM_WARM_DAYS, STATUSES
from gateway.rest.auth import principal_of
from gateway.rest.idempotency import maybe_idempotent
from gateway.rest.lists import container_of, list_page
from gateway.rest.schema_notes import ResponseDoc
from gateway.rest.wallet import INSUFFICIENT_FUNDS
from infra.blocking import run_blocking
from services.swaps.commands import CreateSwap, RenameSwapUserNames
from services.swaps.plan import __doc__ as SWAP_RULES
from services.swaps.steps import __doc__ as SWAP_STEPS_RULES
from services.swaps.use_cases import create_swap, get_swap, rename_user_names
from views.swaps import SwapOut, SwapPage, SwapResponse

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
    async def create(
        self, request: Request[Any, Any, Any], data: CreateSwap
    ) -> Response[SwapResponse]:
        principal, container = principal_of(request), container_of(request)
        return await maybe_idempotent(
            request, lambda: SwapResponse(create_swap(container, principal, data))
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
        self, request: Request[Any, Any, Any], data: RenameSwapUserNames
    ) -> Response[SwapResponse]:
        principal, container = principal_of(request), container_of(request)
        return await maybe_idempotent(
            request, lambda: SwapResponse(rename_user_names(container, principal, data))
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
            render=lambda row: msgspec.json.decode(row["doc"], type=SwapOut),
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
        return SwapResponse(
            await run_blocking(lambda: get_swap(container, principal, swap_id))
        )
