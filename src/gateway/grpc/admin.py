"""AdminService: organizations, API keys, rate limits, wallet credits and the webhook endpoint,
translated to the same use cases the CLI and REST gateway call."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from grpc.aio import ServicerContext

from infra.blocking import run_blocking
from infra.clock import iso
from partnerapi.v2 import admin_pb2, admin_pb2_grpc
from partnerapi.v2.admin_pb2 import (
    CreateApiKeyRequest,
    CreateApiKeyResponse,
    CreateOrganizationRequest,
    CreateOrganizationResponse,
    CreditWalletRequest,
    CreditWalletResponse,
    GetDeploymentRequest,
    GetDeploymentResponse,
    GetOrganizationRequest,
    GetOrganizationResponse,
    ListApiKeysRequest,
    ListApiKeysResponse,
    RevokeApiKeyRequest,
    RevokeApiKeyResponse,
    RotateApiKeyRequest,
    RotateApiKeyResponse,
    SetRateLimitRequest,
    SetRateLimitResponse,
    SetWebhookEndpointRequest,
    SetWebhookEndpointResponse,
)
from projections.api_keys import keys_of
from services.accounts.commands import CreditWallet
from services.accounts.keys import IssuedKey
from services.accounts.wallet import credit_wallet
from webhooks.commands import SetWebhookEndpoint
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


def _rate(
    request: CreateOrganizationRequest | SetRateLimitRequest,
) -> tuple[float | None, int | None]:
    """The rate limit the request sets; None where it leaves a field unset."""
    rps = request.rate_rps if request.HasField("rate_rps") else None
    burst = request.rate_burst if request.HasField("rate_burst") else None
    return rps, burst


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

    async def GetDeployment(
        self, request: GetDeploymentRequest, context: ServicerContext[GetDeploymentRequest, GetDeploymentResponse]
    ) -> GetDeploymentResponse:
        return GetDeploymentResponse(deployment_id=self.c.deployment_id)

    async def CreateOrganization(
        self, request: CreateOrganizationRequest, context: ServicerContext[CreateOrganizationRequest, CreateOrganizationResponse]
    ) -> CreateOrganizationResponse:
        described = await run_blocking(
            lambda: self.c.accounts.create_organization(
                request.name, *_rate(request)
            )
        )
        return CreateOrganizationResponse(organization=_organization(described))

    async def GetOrganization(
        self, request: GetOrganizationRequest, context: ServicerContext[GetOrganizationRequest, GetOrganizationResponse]
    ) -> GetOrganizationResponse:
        accounts = self.c.accounts
        org = await run_blocking(accounts.organization, request.org_id)
        described = accounts.describe_organization(org)
        return GetOrganizationResponse(organization=_organization(described))

    async def SetRateLimit(
        self, request: SetRateLimitRequest, context: ServicerContext[SetRateLimitRequest, SetRateLimitResponse]
    ) -> SetRateLimitResponse:
        described = await run_blocking(
            lambda: self.c.accounts.set_rate_limit(
                request.org_id, *_rate(request)
            )
        )
        return SetRateLimitResponse(organization=_organization(described))

    async def ListApiKeys(
        self, request: ListApiKeysRequest, context: ServicerContext[ListApiKeysRequest, ListApiKeysResponse]
    ) -> ListApiKeysResponse:
        def load() -> list[dict[str, Any]]:
            org = self.c.accounts.organization(request.org_id)
            head = self.c.store.recorder.max_notification_id() or 0
            self.c.read_models.wait_for(head)
            with self.c.read_db.read() as cur:
                return keys_of(cur, str(self.c.accounts.describe_organization(org)["id"]))

        rows = await run_blocking(load)
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
        return ListApiKeysResponse(keys=keys)

    async def CreateApiKey(
        self, request: CreateApiKeyRequest, context: ServicerContext[CreateApiKeyRequest, CreateApiKeyResponse]
    ) -> CreateApiKeyResponse:
        issued = await run_blocking(
            self.c.accounts.create_key, request.org_id, request.environment, request.preset
        )
        return CreateApiKeyResponse(key=_issued(issued))

    async def RotateApiKey(
        self, request: RotateApiKeyRequest, context: ServicerContext[RotateApiKeyRequest, RotateApiKeyResponse]
    ) -> RotateApiKeyResponse:
        issued = await run_blocking(self.c.accounts.rotate_key, request.key_id)
        return RotateApiKeyResponse(key=_issued(issued, replaces=request.key_id))

    async def RevokeApiKey(
        self, request: RevokeApiKeyRequest, context: ServicerContext[RevokeApiKeyRequest, RevokeApiKeyResponse]
    ) -> RevokeApiKeyResponse:
        revoked = await run_blocking(self.c.accounts.revoke_key, request.key_id)
        return RevokeApiKeyResponse(
            id=str(revoked["id"]), revoked=bool(revoked["revoked"])
        )

    async def CreditWallet(
        self, request: CreditWalletRequest, context: ServicerContext[CreditWalletRequest, CreditWalletResponse]
    ) -> CreditWalletResponse:
        command = CreditWallet(org_id=request.org_id, amount_cents=int(request.amount_cents))
        credited = await run_blocking(credit_wallet, self.c, command)
        return CreditWalletResponse(
            org_id=credited.org_id, balance_cents=credited.balance_cents
        )

    async def SetWebhookEndpoint(
        self, request: SetWebhookEndpointRequest, context: ServicerContext[SetWebhookEndpointRequest, SetWebhookEndpointResponse]
    ) -> SetWebhookEndpointResponse:
        endpoints, command = endpoints_of(self.c), SetWebhookEndpoint(url=request.url)
        endpoint = await run_blocking(endpoints.set_url, request.org_id, command)
        return SetWebhookEndpointResponse(url=endpoint.url, secret=endpoint.secret)
