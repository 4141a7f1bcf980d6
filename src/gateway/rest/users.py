"""Users (spec 2.7, 4.1; decisions.md 3): client accounts inside a kind m sequencer workspace."""

from __future__ import annotations

import json
from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get, post

from gateway.rest.auth import principal_of
from gateway.rest.bundles import Links, Meta
from gateway.rest.idempotency import maybe_idempotent
from gateway.rest.lists import container_of, list_page
from gateway.rest.schema_notes import NonEmpty, ResponseDoc, documented
from gateway.rest.vocabulary import Active, Provider
from gateway.rest.workspaces import PROVIDER_ERRORS, UNKNOWN_WORKSPACE
from services.accounts.users import create_user, load_user, user_view
from services.accounts.workspaces import EMAIL, MAX_TEXT


class CreateUserBody(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    workspace_id: str
    email: Annotated[str, documented(pattern=EMAIL.pattern, max_length=MAX_TEXT)]
    first_name: Annotated[NonEmpty, documented(max_length=MAX_TEXT)]
    last_name: Annotated[NonEmpty, documented(max_length=MAX_TEXT)]


class SequencerLink(msgspec.Struct):
    provider: Provider
    client_id: int


class UserOut(msgspec.Struct, kw_only=True):
    id: str
    email: str
    first_name: str
    last_name: str
    status: Active
    sequencer: SequencerLink
    workspace_id: str
    created_at: str


class UserResponse(msgspec.Struct):
    data: UserOut


class UserPage(msgspec.Struct):
    data: list[UserOut]
    links: Links
    meta: Meta


class UsersController(Controller):
    path = "/users"
    tags = ["users"]

    @post(
        operation_id="createUser",
        summary="Create a user: a client account inside a kind m workspace",
        description=(
            "The sequencer creates the client; its id comes back as `sequencer.client_id` and "
            "can be used as `destination.client_id` on orders to that workspace. Other kinds: "
            "400 `provider_not_supported`. An `Idempotency-Key` header is optional."
        ),
        responses={
            201: ResponseDoc(UserResponse, description="The user"),
            **UNKNOWN_WORKSPACE,
            **PROVIDER_ERRORS,
        },
    )
    async def create(self, request: Request[Any, Any, Any], data: CreateUserBody) -> Response[Any]:
        principal = principal_of(request)
        container = container_of(request)
        return await maybe_idempotent(
            request,
            lambda: {
                "data": create_user(
                    container,
                    principal.org_id,
                    principal.environment,
                    workspace_id=data.workspace_id,
                    email=data.email,
                    first_name=data.first_name,
                    last_name=data.last_name,
                )
            },
        )

    @get(
        operation_id="listUsers",
        summary="List users",
        description="Newest first; filter `workspace_id`.",
    )
    async def list_users(
        self,
        request: Request[Any, Any, Any],
        workspace_id: str | None = None,
        per_page: int | None = None,
        page_token: str | None = None,
    ) -> UserPage:
        page = list_page(
            request,
            table="catalog_users",
            where=[
                ("tenant = ?", principal_of(request).tenant),
                ("workspace_id = ?", workspace_id),
            ],
            filters={"workspace_id": workspace_id},
            per_page=per_page,
            page_token=page_token,
            render=lambda row: json.loads(row["doc"]),
        )
        return msgspec.convert(page, UserPage)

    @get(
        "/{user_id:str}",
        operation_id="getUser",
        summary="One user",
        description="A user (`usr_`) of a workspace, with its link to the sequencing provider.",
    )
    async def get_user(self, request: Request[Any, Any, Any], user_id: str) -> UserResponse:
        principal = principal_of(request)
        user = load_user(container_of(request), principal.org_id, principal.environment, user_id)
        return msgspec.convert({"data": user_view(user)}, UserResponse)
