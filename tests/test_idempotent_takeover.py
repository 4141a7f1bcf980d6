"""A process killed between saving what an idempotent request created and recording its
response: after the claim's lease the client's retry takes the claim over and answers what
the dead attempt saved (its id derives from the claim), on every creating route that takes
an Idempotency-Key, not only orders (tests/test_chaos_crash.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import msgspec
import pytest
from conftest import RunningService, ServiceFactory
from pool_support import pooled
from test_orders_sandbox import new_workspace, wait_order
from test_swaps import completed_order, of

from infra.clock import ManualClock
from infra.idempotency import CLAIM_LEASE_SECONDS, Claim, fingerprint
from services.accounts.commands import CreateUser, CreateWorkspace
from services.accounts.keys import Principal
from services.accounts.users import create_user
from services.accounts.workspaces import create_workspace
from services.catalog.bundles import create_bundle
from services.catalog.commands import CreateBundle
from services.domains.commands import PurchaseDomains
from services.domains.purchase import purchase_domains
from services.orders.commands import PlaceOrder
from services.orders.use_cases import place_order
from services.pool.attach import attach
from services.pool.commands import AttachPool
from services.swaps.commands import CreateSwap
from services.swaps.use_cases import create_swap

Setup = Callable[[httpx.Client], tuple[str, dict[str, Any]]]
Dead = Callable[[RunningService, Principal, dict[str, Any]], dict[str, Any]]


def dead_attempt_of(use_case: Callable[[Any, Principal, Any], Any], command: type[Any]) -> Dead:
    """The use case as the dead attempt ran it: saved, its response never recorded."""

    def run(service: RunningService, principal: Principal, body: dict[str, Any]
            ) -> dict[str, Any]:
        view = use_case(service.container, principal, msgspec.convert(body, command))
        result: dict[str, Any] = msgspec.to_builtins(view)
        return result

    return run


def workspace_case(client: httpx.Client) -> tuple[str, dict[str, Any]]:
    return "/workspaces", {"name": "Acme", "provider": "u", "credentials": {"api_key": "k1"}}


def bundle_case(client: httpx.Client) -> tuple[str, dict[str, Any]]:
    return "/bundles", {"name": "Std", "monthly_sending_volume": 10000, "send_on_weekends": False}


def user_case(client: httpx.Client) -> tuple[str, dict[str, Any]]:
    workspace = new_workspace(client, "m", label="Main", api_key="k1")
    return "/users", {"workspace_id": workspace, "email": "ann@example.com",
                      "first_name": "Ann", "last_name": "Lee"}


def attach_case(client: httpx.Client) -> tuple[str, dict[str, Any]]:
    pooled(client, 2)
    return "/pool/attach", {"workspace_id": new_workspace(client), "quantity": 1}


def swap_case(client: httpx.Client) -> tuple[str, dict[str, Any]]:
    order = completed_order(client)
    return "/swaps", of(order, order["domains"][0]["domain"])


def purchase_case(client: httpx.Client) -> tuple[str, dict[str, Any]]:
    return "/domains/purchase", {"domains": [{"domain": "ghost-bought.com", "auto_renew": True}]}


def named_order_case(client: httpx.Client) -> tuple[str, dict[str, Any]]:
    bought = client.post("/domains/purchase", json={"domains": [{"domain": "ghost-named.com"}]},
                         headers={"Idempotency-Key": "bought"}).json()["data"]
    wait_order(client, bought["id"])
    return "/orders", {"destination": {"workspace_id": new_workspace(client)},
                       "suite_a": {"domains": 1, "inboxes_per_domain": 1},
                       "domains": [{"domain": "ghost-named.com", "suite": "suite_a"}]}


CASES = {
    "workspace": (workspace_case, dead_attempt_of(create_workspace, CreateWorkspace), 201),
    "bundle": (bundle_case, dead_attempt_of(create_bundle, CreateBundle), 201),
    "user": (user_case, dead_attempt_of(create_user, CreateUser), 201),
    "pool_attach": (attach_case, dead_attempt_of(attach, AttachPool), 202),
    "swap": (swap_case, dead_attempt_of(create_swap, CreateSwap), 201),
    # Their names are the dead attempt's own: not `already_owned`, not held by another order.
    "purchase": (purchase_case, dead_attempt_of(purchase_domains, PurchaseDomains), 201),
    "named_order": (named_order_case, dead_attempt_of(place_order, PlaceOrder), 201),
}
# A second request with a fresh key would meet the first one's names.
SINGLE_USE = {"swap", "purchase", "named_order"}


def tenant_on_a_manual_clock(
    service_factory: ServiceFactory,
) -> tuple[RunningService, ManualClock, str, Principal]:
    """A service whose clock the test moves (past a claim's lease), and a sandbox tenant."""
    clock = ManualClock()
    service = service_factory(clock=clock)
    secret = service.new_key(service.new_org(), "test")
    principal = service.container.accounts.authenticate(secret)
    assert principal is not None
    return service, clock, secret, principal


@pytest.mark.parametrize("case", list(CASES))
def test_a_retry_answers_what_the_dead_attempt_created(
    service_factory: ServiceFactory, case: str
) -> None:
    setup, dead, status = CASES[case]
    service, clock, secret, principal = tenant_on_a_manual_clock(service_factory)
    with service.client(secret) as client:
        path, body = setup(client)
        print_ = fingerprint("POST", f"/partner/v1{path}", json.dumps(body).encode())
        claim = service.container.idempotency.begin(principal.tenant, "died", print_)
        assert isinstance(claim, Claim)
        token = claim.enter()
        try:
            ghost = dead(service, principal, body)  # saved; the response never recorded
        finally:
            Claim.leave(token)

        clock.advance(CLAIM_LEASE_SECONDS + 1)
        retried = client.post(path, json=body, headers={"Idempotency-Key": "died"})
        assert retried.status_code == status, retried.text
        found = retried.json()["data"]
        assert found.get("id", found.get("workspace_id")) == ghost.get(
            "id", ghost.get("workspace_id"))
        again = client.post(path, json=body, headers={"Idempotency-Key": "died"})
        assert again.headers["Idempotent-Replayed"] == "true"
        assert again.json()["data"] == found
        if case in SINGLE_USE:
            return  # e.g. the swapped domain left the order: a second swap of it is refused
        fresh = client.post(path, json=body, headers={"Idempotency-Key": "another"})
        assert fresh.status_code == status, fresh.text  # a new key still creates anew
        assert fresh.json()["data"] != found


def test_a_key_still_in_progress_says_when_to_ask_again(service_factory: ServiceFactory) -> None:
    """409 `idempotency_in_progress` carries `Retry-After` and `details.retry_after_seconds`,
    as the other answers that mean "retry later" do."""
    service, _, secret, principal = tenant_on_a_manual_clock(service_factory)
    with service.client(secret) as client:
        body = {"name": "Held", "provider": "u", "credentials": {"api_key": "key_good"}}
        print_ = fingerprint("POST", "/partner/v1/workspaces", json.dumps(body).encode())
        held = service.container.idempotency.begin(principal.tenant, "held-key", print_)
        assert isinstance(held, Claim)
        answer = client.post("/workspaces", json=body, headers={"Idempotency-Key": "held-key"})
        assert answer.status_code == 409, answer.text
        error = answer.json()["error"]
        assert error["code"] == "idempotency_in_progress"
        assert answer.headers["Retry-After"] == "1"
        assert error["details"] == {"retry_after_seconds": 1}
