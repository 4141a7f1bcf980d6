"""Domains (spec 2.4, 2.5, 4.1; decisions.md 3): availability, the inventory list, one domain."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get, patch, post
from litestar.params import Parameter

from domain.domains import STATUSES
from domain.errors import invalid
from gateway.rest.auth import WRITE_LIMITED, principal_of
from gateway.rest.idempotency import maybe_idempotent
from gateway.rest.lists import container_of, list_page
from gateway.rest.schema_notes import ResponseDoc
from services.domains.commands import CheckAvailability, UpdateDomain
from services.domains.renewals import __doc__ as RENEWAL_RULES
from services.domains.renewals import update_domain
from services.domains.use_cases import __doc__ as AVAILABILITY_RULES
from services.domains.use_cases import check_availability, get_domain, render_rows
from views.domains import AvailabilityResponse, DomainPage, DomainResponse

CATEGORIES = ("inventory", "connected")


# Documentation only: the handlers check filter values themselves, to answer the spec-7
# envelope with `field`; `schema_extra` puts the allowed values in the OpenAPI document.
CategoryFilter = Annotated[str | None, Parameter(schema_extra={"enum": list(CATEGORIES)})]
StatusFilter = Annotated[str | None, Parameter(schema_extra={"enum": list(STATUSES)})]


class DomainsController(Controller):
    path = "/domains"
    tags = ["domains"]

    @post(
        "/availability",
        operation_id="checkDomainAvailability",
        summary="Check 1 to 50 domain names: availability, prices and usable_for",
        description=AVAILABILITY_RULES,
        opt=WRITE_LIMITED,
        status_code=200,
        responses={200: ResponseDoc(AvailabilityResponse, description="One row per domain sent")},
    )
    async def availability(
        self, request: Request[Any, Any, Any], data: CheckAvailability
    ) -> AvailabilityResponse:
        rows = check_availability(container_of(request), principal_of(request), data)
        return AvailabilityResponse(data=rows)

    @get(
        operation_id="listDomains",
        summary="List the organization's domains (inventory and connected)",
        description=(
            "Filters: `category` (`inventory`: owned, on no order, no `provider`; `connected`: "
            "on an active order, with `provider`, `customer_id`, `order_id`, `usable_for`, "
            "`forwarding_url`), `status`, `domain` (exact name). Newest first."
        ),
        responses={200: ResponseDoc(DomainPage, description="A page of domains")},
    )
    async def list_domains(
        self,
        request: Request[Any, Any, Any],
        category: CategoryFilter = None,
        status: StatusFilter = None,
        domain: str | None = None,
        per_page: int | None = None,
        page_token: str | None = None,
    ) -> DomainPage:
        if category is not None and category not in CATEGORIES:
            raise invalid("category must be inventory or connected.", "category")
        if status is not None and status not in STATUSES:
            raise invalid(f"status must be one of {', '.join(STATUSES)}.", "status")
        name = domain.strip().lower().rstrip(".") if domain else None
        container = container_of(request)
        page = list_page(
            request,
            table="domains",
            where=[
                ("tenant = ?", principal_of(request).tenant),
                ("category = ?", category),
                ("status = ?", status),
                ("name = ?", name),
            ],
            filters={"category": category, "status": status, "domain": name},
            per_page=per_page,
            page_token=page_token,
            render=lambda row: row,
        )
        page["data"] = render_rows(container, page["data"])
        return msgspec.convert(page, DomainPage)

    @get(
        "/{domain_id:str}",
        operation_id="getDomain",
        description="A domain of the organization's inventory or of an order, by its `dom_` id "
        "(one id whether or not it is on an order): status, category, source and "
        "where it is connected.",
        summary="One domain by its dom_ id (the same id on or off an order)",
        responses={200: ResponseDoc(DomainResponse, description="The domain")},
    )
    async def get_one(self, request: Request[Any, Any, Any], domain_id: str) -> DomainResponse:
        tenant = principal_of(request).tenant
        return DomainResponse(get_domain(container_of(request), tenant, domain_id))

    @patch(
        "/{domain_id:str}",
        operation_id="updateDomain",
        summary="Turn a bought domain's yearly renewal (`auto_renew`) off or on",
        description=(RENEWAL_RULES or "")
        + "\n\nBody: `{\"auto_renew\": false}` or `true`. `full` preset. An imported domain: "
        "409 `domain_not_renewable`. Answers the domain.",
        responses={
            200: ResponseDoc(DomainResponse, description="The domain"),
            409: ResponseDoc(
                None, description="domain_not_renewable: an imported domain renews with the "
                "customer's registrar"
            ),
        },
    )
    async def update(
        self, request: Request[Any, Any, Any], domain_id: str, data: UpdateDomain
    ) -> Response[DomainResponse]:
        principal, container = principal_of(request), container_of(request)

        def run() -> DomainResponse:
            return DomainResponse(update_domain(container, principal, domain_id, data))

        return await maybe_idempotent(request, run, status_code=200)
