"""Provider workspaces: the creation rules of each sequencer kind (spec 2.3), sealed credentials,
optional customer tracking, and the loader other capabilities route orders through."""

from __future__ import annotations

import re
import uuid
from typing import TYPE_CHECKING, Any

from adapters.sequencers import SequencerCredentials, sequencers_of
from domain.errors import DomainError, NotFound, invalid
from domain.workspaces import PROVIDERS, Workspace
from infra.idempotency import created_before
from infra.ids import new_id, parse_id, public_id
from services.accounts.commands import (
    EMAIL_PATTERN,
    MAX_CREDENTIAL,
    MAX_TEXT,
    CreateWorkspace,
    UpdateWorkspace,
)
from services.accounts.keys import Principal
from views.workspaces import WorkspaceOut, workspace_view

if TYPE_CHECKING:
    from runtime.container import Container

_CUSTOMER_NAMESPACE = uuid.UUID("3b0f7a52-9c1e-4d8a-b6e2-5a7c9d1f0e43")
EMAIL = re.compile(EMAIL_PATTERN)
CUSTOMER_FIELDS = ("external_id", "name", "email")

# Credential properties each kind accepts; any other one sent is invalid_request on its path.
ALLOWED_CREDENTIALS = {
    "u": ("api_key",),
    "i": ("api_key",),
    "m": ("api_key", "label", "email", "password"),
    "w": ("api_key", "workspace_id", "email", "password"),
}
_WHY_NOT = {
    ("i", "email"): "Kind i login credentials belong on an order destination, not on the workspace.",
    ("i", "password"): "Kind i login credentials belong on an order destination, not on the workspace.",
}


def load_workspace(
    container: Container, org_id: str, environment: str, workspace_id: str, field: str = "workspace_id"
) -> Workspace:
    """This tenant's workspace, or 404 not_found (unknown, another organization's, or the
    other environment's: live keys never see sandbox workspaces and the reverse)."""
    found = container.store.find(parse_id("wrk", workspace_id), Workspace)
    if not isinstance(found, Workspace) or not found.owned_by(org_id, environment):
        raise NotFound("workspace", field=field)
    return found


def load_target_workspace(
    container: Container, org_id: str, environment: str, workspace_id: str, field: str = "workspace_id"
) -> Workspace:
    """The workspace live or sandbox work is routed to (orders, purchases, imports, users, pool
    attach). A sandbox workspace is not a live one: a live key naming its organization's
    sandbox workspace is told to promote it, 409 `workspace_promotion_required` (create it again
    with the live key), rather than that no such workspace exists. Anything else unknown is 404."""
    try:
        return load_workspace(container, org_id, environment, workspace_id, field)
    except NotFound:
        if environment != "live":
            raise
    found = container.store.find(parse_id("wrk", workspace_id), Workspace)
    if isinstance(found, Workspace) and found.owned_by(org_id, "test"):
        raise DomainError(
            "workspace_promotion_required",
            f"{workspace_id} is a sandbox workspace; live work needs a live one. Create it "
            "with a live key (POST /workspaces, same credentials) and route to that.",
            field=field,
            details={"workspace_id": workspace_id, "environment": "test"},
        )
    raise NotFound("workspace", field=field)


def check_client(
    workspace: Workspace, client_id: int, field: str = "destination.client_id"
) -> None:
    """A `client_id` (of an order destination, a pool attach) must be a client of this kind m
    workspace."""
    if workspace.provider != "m":
        raise invalid("client_id is accepted only for kind m workspaces.", field)
    if not workspace.has_client(client_id):
        raise DomainError(
            "sequencer_client_not_found",
            f"No client {client_id} in this workspace.",
            field=field,
        )


def credentials_of(container: Container, workspace: Workspace) -> SequencerCredentials:
    """The plain credentials, for adapters only: never put them in a response or event."""
    data: dict[str, Any] = container.sealer.unseal(workspace.credentials_sealed)
    return SequencerCredentials.from_json(data)


def get_workspace(container: Container, principal: Principal, workspace_id: str) -> WorkspaceOut:
    return workspace_view(
        load_workspace(container, principal.org_id, principal.environment, workspace_id)
    )


def create_workspace(
    container: Container, principal: Principal, command: CreateWorkspace
) -> WorkspaceOut:
    org_id, environment = principal.org_id, principal.environment
    if (earlier := created_before(container, "workspace", Workspace)) is not None:
        return workspace_view(earlier)  # saved by this request's first attempt, which died
    kind = _supported_kind(command.provider)
    title = _name(command.name, f"Kind {kind.upper()} workspace")
    checked = check_credentials(kind, command.credentials)
    if command.customer is not None and kind == "m":
        raise invalid("Kind m workspaces do not accept customer data at creation.", "customer")
    tracked = _customer(org_id, environment, command.customer)
    provider_workspace_id = sequencers_of(container).connect(kind, checked)
    workspace = Workspace(
        org_id=org_id,
        environment=environment,
        name=title,
        provider=kind,
        provider_workspace_id=provider_workspace_id,
        credentials_sealed=container.sealer.seal(checked.to_json()),
        has_login_pair=checked.has_login_pair,
        customer=tracked,
        created_at=container.clock.now(),
    )
    container.unit_of_work.save(workspace)
    return workspace_view(workspace)


def _supported_kind(provider: str) -> str:
    kind = provider.strip().lower()
    if kind not in PROVIDERS:
        raise DomainError(
            "provider_not_supported",
            "provider must be one of u, i, m, w.",
            field="provider",
            details={"supported": list(PROVIDERS)},
        )
    return kind


def _same_kind(kind: str, sent: str | None) -> None:
    """A workspace's kind is fixed at creation: credentials of another kind belong to a new
    workspace (orders routed here would otherwise change provider)."""
    if sent is not None and _supported_kind(sent) != kind:
        raise DomainError(
            "provider_mismatch",
            f"This workspace is kind {kind}; its kind cannot change. Create a new workspace "
            f"for kind {sent}.",
            field="provider",
            details={"provider": kind},
        )


def update_workspace(
    container: Container, principal: Principal, workspace_id: str, command: UpdateWorkspace
) -> WorkspaceOut:
    def attempt() -> WorkspaceOut:
        workspace = load_workspace(
            container, principal.org_id, principal.environment, workspace_id
        )
        _same_kind(workspace.provider, command.provider)
        now = container.clock.now()
        if command.name is not None:
            workspace.rename(_name(command.name, workspace.name), now)
        if command.credentials is not None:
            checked = check_credentials(workspace.provider, command.credentials)
            remote_id = sequencers_of(container).connect(workspace.provider, checked)
            # A new key for kinds u, i, m rotates access to the same workspace. Kind w names
            # its remote workspace: replacing credentials must not move the routing target of
            # the orders already placed, so another remote workspace is a conflict.
            if workspace.provider == "w" and remote_id != workspace.provider_workspace_id:
                raise DomainError(
                    "workspace_credentials_conflict",
                    f"These credentials are for remote workspace {remote_id}, not "
                    f"{workspace.provider_workspace_id}; create a new workspace for it.",
                    field="credentials.workspace_id",
                    details={"provider_workspace_id": workspace.provider_workspace_id},
                )
            workspace.replace_credentials(
                credentials_sealed=container.sealer.seal(checked.to_json()),
                has_login_pair=checked.has_login_pair,
                provider_workspace_id=workspace.provider_workspace_id,
                at=now,
            )
        container.unit_of_work.save(workspace)
        return workspace_view(workspace)

    return container.unit_of_work.retrying(attempt)


def check_credentials(kind: str, credentials: dict[str, object] | None) -> SequencerCredentials:
    """The kind's creation rules (spec 2.3), each violation with its code and field."""
    if credentials is None:
        raise invalid("credentials are required.", "credentials")
    given = {k: v for k, v in credentials.items() if v is not None}
    allowed = ALLOWED_CREDENTIALS[kind]
    for key in credentials:
        if key not in ALLOWED_CREDENTIALS["w"] + ALLOWED_CREDENTIALS["m"]:
            raise invalid(f"Unknown property credentials.{key}.", f"credentials.{key}")
    for key in given:
        if key not in allowed:
            message = _WHY_NOT.get((kind, key), f"credentials.{key} does not belong to kind {kind}.")
            raise invalid(message, f"credentials.{key}")
    sent: dict[str, str] = {}
    for key, value in given.items():
        if not isinstance(value, str) or not value.strip():
            raise invalid(f"credentials.{key} must be a non-empty string.", f"credentials.{key}")
        if len(value) > MAX_CREDENTIAL:
            raise invalid(
                f"credentials.{key} is at most {MAX_CREDENTIAL} characters.", f"credentials.{key}"
            )
        sent[key] = value
    if "api_key" not in sent:
        raise invalid("credentials.api_key is required.", "credentials.api_key")
    if kind == "m" and "label" not in sent:
        raise invalid("Kind m needs the main account's label.", "credentials.label")
    if kind == "w" and "workspace_id" not in sent:
        raise invalid("Kind w needs the remote workspace_id.", "credentials.workspace_id")
    if kind in ("m", "w"):
        _check_login_pair(kind, sent)
    return SequencerCredentials(
        api_key=sent["api_key"],
        # An identifier, compared on PATCH: surrounding spaces are not part of it.
        workspace_id=sent["workspace_id"].strip() if "workspace_id" in sent else None,
        label=sent.get("label"),
        email=sent.get("email"),
        password=sent.get("password"),
    )


def _check_login_pair(kind: str, sent: dict[str, str]) -> None:
    has_email, has_password = "email" in sent, "password" in sent
    if has_email and not EMAIL.match(sent["email"]):
        raise invalid("credentials.email is not an email address.", "credentials.email")
    if kind == "w" and not (has_email and has_password):
        missing = "credentials.email" if not has_email else "credentials.password"
        raise DomainError(
            "provider_login_credentials_required",
            "Kind w needs the login email and password together.",
            field=missing,
        )
    if has_email != has_password:
        missing = "credentials.email" if not has_email else "credentials.password"
        raise DomainError(
            "provider_login_credentials_required",
            "The login email and password must be sent together.",
            field=missing,
        )


def _name(name: str | None, default: str) -> str:
    if name is None:
        return default
    name = name.strip()
    if not name or len(name) > MAX_TEXT:
        raise invalid(f"name must be 1 to {MAX_TEXT} characters.", "name")
    return name


def _customer(
    org_id: str, environment: str, customer: dict[str, object] | None
) -> dict[str, str | None] | None:
    """Customer tracking record: the same `external_id` is the same `cus_` in one tenant."""
    if customer is None:
        return None
    for key in customer:
        if key not in CUSTOMER_FIELDS:
            raise invalid(f"Unknown property customer.{key}.", f"customer.{key}")
    sent: dict[str, str] = {}
    for key, value in customer.items():
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_TEXT:
            raise invalid(f"customer.{key} must be 1 to {MAX_TEXT} characters.", f"customer.{key}")
        sent[key] = value
    if not sent:
        raise invalid("customer needs an external_id, name or email.", "customer")
    if "email" in sent and not EMAIL.match(sent["email"]):
        raise invalid("customer.email is not an email address.", "customer.email")
    external_id = sent.get("external_id")
    if external_id:
        customer_uuid = uuid.uuid5(_CUSTOMER_NAMESPACE, f"{org_id}:{environment}:{external_id}")
    else:
        customer_uuid = new_id()
    return {
        "id": public_id("cus", customer_uuid),
        "external_id": external_id,
        "name": sent.get("name"),
        "email": sent.get("email"),
    }
