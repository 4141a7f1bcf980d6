"""AdminService: organizations, API keys, rate limits, wallet credits and the webhook endpoint,
translated to the same use cases the CLI and REST gateway call."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

from infra.clock import iso
from partnerapi.v2 import admin_pb2, admin_pb2_grpc
from projections.api_keys import keys_of
from services.accounts.commands import CreditWallet
from services.accounts.keys import IssuedKey
from services.accounts.wallet import credit_wallet
from webhooks.endpoints import endpoints_of

if TYPE_CHECKING:
    from runtime.container import Container


def _organization(described: dict[str, Any]) -> admin_pb2.Organization:
    message = admin_pb2.Organization(id=described["id"], name=described["name"])
    if described.get("rate_rps") is not None:
        message.rate_rps = float(described["rate_rps"])
    if described.get("rate_burst") is not None:
        message.rate_burst = int(described["rate_burst"])
    return message


def _optional(request: Any, name: str) -> Any:
    return getattr(request, name) if request.HasField(name) else None


def _issued(issued: IssuedKey, replaces: str = "") -> admin_pb2.IssuedApiKey:
    return admin_pb2.IssuedApiKey(
        id=issued.id,
        secret=issued.secret,
        org_id=issued.org_id,
        environment=issued.environment,
        preset=issued.preset,
        replaces=replaces,
    )


class AdminServicer(admin_pb2_grpc.AdminServiceServicer):
    def __init__(self, container: Container) -> None:
        self.c = container

    async def GetDeployment(self, request: Any, context: Any) -> Any:
        return admin_pb2.GetDeploymentResponse(deployment_id=self.c.deployment_id)

    async def CreateOrganization(self, request: Any, context: Any) -> Any:
        described = await anyio.to_thread.run_sync(
            lambda: self.c.accounts.create_organization(
                request.name, _optional(request, "rate_rps"), _optional(request, "rate_burst")
            )
        )
        return admin_pb2.CreateOrganizationResponse(organization=_organization(described))

    async def GetOrganization(self, request: Any, context: Any) -> Any:
        accounts = self.c.accounts
        org = await anyio.to_thread.run_sync(accounts.organization, request.org_id)
        described = accounts.describe_organization(org)
        return admin_pb2.GetOrganizationResponse(organization=_organization(described))

    async def SetRateLimit(self, request: Any, context: Any) -> Any:
        described = await anyio.to_thread.run_sync(
            lambda: self.c.accounts.set_rate_limit(
                request.org_id, _optional(request, "rate_rps"), _optional(request, "rate_burst")
            )
        )
        return admin_pb2.SetRateLimitResponse(organization=_organization(described))

    async def ListApiKeys(self, request: Any, context: Any) -> Any:
        def load() -> list[dict[str, Any]]:
            org = self.c.accounts.organization(request.org_id)
            head = self.c.store.recorder.max_notification_id() or 0
            self.c.read_models.wait_for(head)
            with self.c.read_db.read() as cur:
                return keys_of(cur, str(self.c.accounts.describe_organization(org)["id"]))

        rows = await anyio.to_thread.run_sync(load)
        keys = []
        for row in rows:
            key = admin_pb2.ApiKey(
                id=row["id"],
                org_id=row["org_id"],
                environment=row["environment"],
                preset=row["preset"],
                created_at=iso(row["created_at"]),
            )
            if row["revoked_at"] is not None:
                key.revoked_at = iso(row["revoked_at"])
            keys.append(key)
        return admin_pb2.ListApiKeysResponse(keys=keys)

    async def CreateApiKey(self, request: Any, context: Any) -> Any:
        issued = await anyio.to_thread.run_sync(
            self.c.accounts.create_key, request.org_id, request.environment, request.preset
        )
        return admin_pb2.CreateApiKeyResponse(key=_issued(issued))

    async def RotateApiKey(self, request: Any, context: Any) -> Any:
        issued = await anyio.to_thread.run_sync(self.c.accounts.rotate_key, request.key_id)
        return admin_pb2.RotateApiKeyResponse(key=_issued(issued, replaces=request.key_id))

    async def RevokeApiKey(self, request: Any, context: Any) -> Any:
        revoked = await anyio.to_thread.run_sync(self.c.accounts.revoke_key, request.key_id)
        return admin_pb2.RevokeApiKeyResponse(
            id=str(revoked["id"]), revoked=bool(revoked["revoked"])
        )

    async def CreditWallet(self, request: Any, context: Any) -> Any:
        command = CreditWallet(org_id=request.org_id, amount_cents=int(request.amount_cents))
        credited = await anyio.to_thread.run_sync(credit_wallet, self.c, command)
        return admin_pb2.CreditWalletResponse(
            org_id=credited.org_id, balance_cents=credited.balance_cents
        )

    async def SetWebhookEndpoint(self, request: Any, context: Any) -> Any:
        endpoints = endpoints_of(self.c)
        endpoint = await anyio.to_thread.run_sync(endpoints.set_url, request.org_id, request.url)
        return admin_pb2.SetWebhookEndpointResponse(url=endpoint["url"], secret=endpoint["secret"])
