"""Users (spec 2.7, 4.1; decisions.md 3): client accounts inside a kind m sequencer workspace."""

from __future__ import annotations

import json
from typing import Any

import msgspec
from litestar import Controller, Request, Response, get, post

from gateway.rest.auth import principal_of
from gateway.rest.idempotency import maybe_idempotent
from gateway.rest.lists import container_of, list_page
from gateway.rest.schema_notes import ResponseDoc
from gateway.rest.workspaces import PROVIDER_ERRORS, UNKNOWN_WORKSPACE
from services.accounts.commands import CreateUser
from services.accounts.users import create_user, get_user
from views.users import UserPage, UserResponse


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
    async def create(
        self, request: Request[Any, Any, Any], data: CreateUser
    ) -> Response[UserResponse]:
        principal = principal_of(request)
        container = container_of(request)
        return await maybe_idempotent(
            request, lambda: UserResponse(create_user(container, principal, data))
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
        return UserResponse(get_user(container_of(request), principal_of(request), user_id))
