"""The CLI's way to a running server: org, key, wallet and webhook commands go through the
AdminService when one answers on the configured port with our operator token; otherwise the
CLI acts on the store directly (decisions.md section 2), but never while a server of another
deployment answers there (`check_same_deployment`)."""

from __future__ import annotations

import argparse
import socket
from collections.abc import Callable
from typing import Any

import grpc

from domain.errors import DomainError
from gateway.grpc.errors import error_from
from infra.deployment import store_label, stored_deployment_id
from infra.settings import Settings, host_port
from partnerapi.v2 import admin_pb2, admin_pb2_grpc

TIMEOUT_SECONDS = 30.0
CONNECT_SECONDS = 1.0

Call = Callable[[Any, argparse.Namespace], dict[str, Any]]


def _rate(message: Any) -> dict[str, Any]:
    return {
        "rate_rps": message.rate_rps if message.HasField("rate_rps") else None,
        "rate_burst": message.rate_burst if message.HasField("rate_burst") else None,
    }


def _org_create(stub: Any, args: argparse.Namespace) -> dict[str, Any]:
    request = admin_pb2.CreateOrganizationRequest(name=args.name)
    if args.rate_rps is not None:
        request.rate_rps = args.rate_rps
    if args.rate_burst is not None:
        request.rate_burst = args.rate_burst
    org = stub.CreateOrganization(request, **_call_options(args)).organization
    return {"id": org.id, "name": org.name, **_rate(org)}


def _org_rate_limit(stub: Any, args: argparse.Namespace) -> dict[str, Any]:
    request = admin_pb2.SetRateLimitRequest(org_id=args.org_id)
    if args.rate_rps is not None:
        request.rate_rps = args.rate_rps
    if args.rate_burst is not None:
        request.rate_burst = args.rate_burst
    org = stub.SetRateLimit(request, **_call_options(args)).organization
    return {"id": org.id, "name": org.name, **_rate(org)}


def _key_create(stub: Any, args: argparse.Namespace) -> dict[str, Any]:
    request = admin_pb2.CreateApiKeyRequest(
        org_id=args.org_id, environment=args.env, preset=args.preset
    )
    key = stub.CreateApiKey(request, **_call_options(args)).key
    return {
        "id": key.id,
        "secret": key.secret,
        "org_id": key.org_id,
        "environment": key.environment,
        "preset": key.preset,
    }


def _key_rotate(stub: Any, args: argparse.Namespace) -> dict[str, Any]:
    request = admin_pb2.RotateApiKeyRequest(key_id=args.key_id)
    key = stub.RotateApiKey(request, **_call_options(args)).key
    return {"id": key.id, "secret": key.secret, "replaces": key.replaces}


def _key_revoke(stub: Any, args: argparse.Namespace) -> dict[str, Any]:
    request = admin_pb2.RevokeApiKeyRequest(key_id=args.key_id)
    done = stub.RevokeApiKey(request, **_call_options(args))
    return {"id": done.id, "revoked": done.revoked}


def _wallet_credit(stub: Any, args: argparse.Namespace) -> dict[str, Any]:
    request = admin_pb2.CreditWalletRequest(org_id=args.org_id, amount_cents=args.cents)
    balance = stub.CreditWallet(request, **_call_options(args))
    return {"org_id": balance.org_id, "balance_cents": balance.balance_cents}


def _webhook_set(stub: Any, args: argparse.Namespace) -> dict[str, Any]:
    request = admin_pb2.SetWebhookEndpointRequest(org_id=args.org_id, url=args.url)
    endpoint = stub.SetWebhookEndpoint(request, **_call_options(args))
    return {"url": endpoint.url, "secret": endpoint.secret}


CALLS: dict[tuple[str, str], Call] = {
    ("org", "create"): _org_create,
    ("org", "rate-limit"): _org_rate_limit,
    ("key", "create"): _key_create,
    ("key", "rotate"): _key_rotate,
    ("key", "revoke"): _key_revoke,
    ("wallet", "credit"): _wallet_credit,
    ("webhook", "set"): _webhook_set,
}
# The arguments each call reads; a command parsed differently is run against the store.
NEEDS = {("wallet", "credit"): ("org_id", "cents"), ("webhook", "set"): ("org_id", "url")}


def _call_options(args: argparse.Namespace) -> dict[str, Any]:
    return {"metadata": args._grpc_metadata, "timeout": TIMEOUT_SECONDS}


def target_of(settings: Settings) -> str:
    return host_port(_local_host(settings), settings.grpc_port)


def _local_host(settings: Settings) -> str:
    return settings.host if settings.host not in {"0.0.0.0", "::", ""} else "127.0.0.1"


def run_remote(settings: Settings, args: argparse.Namespace) -> dict[str, Any] | None:
    """The command's result from the running server, or None when none of ours answers.

    A domain error from the server is raised as the same DomainError the store would raise.
    """
    name = (args.group, getattr(args, "action", ""))
    call = CALLS.get(name)
    if call is None or not settings.operator_token:
        return None
    if not all(hasattr(args, needed) for needed in NEEDS.get(name, ())):
        return None
    args._grpc_metadata = (("authorization", f"Bearer {settings.operator_token}"),)
    target = target_of(settings)
    if not _listening(settings):
        return None  # no server: the call certainly did not run
    with grpc.insecure_channel(target) as channel:
        try:
            grpc.channel_ready_future(channel).result(timeout=CONNECT_SECONDS)
        except grpc.FutureTimeoutError:
            return None  # no gRPC server there (or it is going away): nothing ran
        try:
            return call(admin_pb2_grpc.AdminServiceStub(channel), args)  # type: ignore[no-untyped-call]
        except grpc.RpcError as failure:
            if failure.code() == grpc.StatusCode.UNAUTHENTICATED:
                return None  # another deployment's server: it ran nothing
            if failure.code() == grpc.StatusCode.UNAVAILABLE:
                # Connected, then gone during the call, which it may have completed: writing
                # the store here as well could credit a wallet or create a key twice.
                raise DomainError(
                    "internal_error",
                    f"the server at {target} stopped answering during the call, which may "
                    "have run; check its effect before repeating it",
                ) from None
            error = error_from(failure)
            if error is None:
                raise
            raise error from None


def _listening(settings: Settings) -> bool:
    """Whether anything accepts connections on the gRPC port. A refused connection answers at
    once, where waiting for a gRPC channel to nothing would take the whole CONNECT_SECONDS on
    every CLI command run without a server."""
    address = (_local_host(settings), settings.grpc_port)
    try:
        with socket.create_connection(address, timeout=CONNECT_SECONDS):
            return True
    except OSError:
        return False


class AnotherDeployment(Exception):
    """A gRPC server answers on the configured port for another store than the configured one."""


def check_same_deployment(settings: Settings) -> None:
    """Raise AnotherDeployment unless the configured store may be used directly: nothing
    listens on the gRPC port, what listens speaks no gRPC, or the server there reports the
    configured store's own deployment id (a server of this deployment running beside us)."""
    if not _listening(settings):
        return
    target = target_of(settings)
    with grpc.insecure_channel(target) as channel:
        try:
            grpc.channel_ready_future(channel).result(timeout=CONNECT_SECONDS)
        except grpc.FutureTimeoutError:
            return  # no gRPC server there (TLS-only, or not ours)
        stub = admin_pb2_grpc.AdminServiceStub(channel)  # type: ignore[no-untyped-call]
        try:
            served = stub.GetDeployment(admin_pb2.GetDeploymentRequest(), timeout=TIMEOUT_SECONDS)
        except grpc.RpcError as failure:
            raise AnotherDeployment(
                f"refusing to act on store {store_label(settings)}: the gRPC server on {target} "
                f"does not say which deployment it serves ({failure.code().name}); point "
                "PARTNER_API_GRPC_PORT at this store's own server"
            ) from None
    ours = stored_deployment_id(settings)
    if served.deployment_id != ours:
        raise AnotherDeployment(
            f"refusing to act on store {store_label(settings)}: the server on {target} serves "
            f"another deployment ({served.deployment_id}; this store: {ours or 'not created'}); "
            "point PARTNER_API_DATA_DIR or PARTNER_API_DATABASE_URL at its store, or "
            "PARTNER_API_GRPC_PORT at this store's own server"
        )
