"""Spec audit of the pool: pool attach checked against the letter of spec 4.2, 7 and 9
(all-or-nothing with `insufficient_inventory`, the kind M login rule before anything else)."""

from __future__ import annotations

from typing import Any

from conftest import RunningService
from pool_support import add, attach, attached, conditions, pooled
from test_orders_live import wait_status
from test_orders_sandbox import counts, error_of, new_workspace, placed

from domain.orders import Order
from infra.clock import ManualClock
from infra.ids import parse_id
from services.pool.records import pool_domain_for


def test_kind_m_without_login_is_refused_whatever_client_is_named(
    service: RunningService,
) -> None:
    # Spec 4.2 / 9 (2026-07-28): attach to a kind M target with no saved login pair is
    # rejected before any domain is reserved; an unknown client_id must not hide that.
    with service.partner() as client:
        pooled(client, 1)
        kind_m = new_workspace(client, "m", label="Main")
        for extra in ({"client_id": 12}, {}):
            error = error_of(
                attach(client, kind_m, 1, **extra), 400, "provider_login_credentials_required"
            )
            assert error["field"] == "workspace_id"
        assert set(conditions(client).values()) == {"available"}


def test_a_quantity_the_pool_cannot_fill_is_insufficient_inventory(
    service: RunningService,
) -> None:
    # Spec 4.2 / 7: the full quantity, or `insufficient_inventory` with no pool change, even
    # for a quantity beyond one reservation's cap.
    with service.partner() as client:
        names = pooled(client, 2)
        workspace = new_workspace(client)
        for quantity in (3, 101, 5000):
            error = error_of(attach(client, workspace, quantity), 409, "insufficient_inventory")
            assert error["details"] == {"requested": quantity, "available": 2}
        assert conditions(client) == {name: "available" for name in names}
        error = error_of(attach(client, workspace, 0), 400, "invalid_request")
        assert error["field"] == "quantity"
        assert attached(client, workspace, 2)["status"] == "completed"
        assert set(conditions(client).values()) == {"assigned"}


def test_cancelling_an_order_takes_its_idle_domains_out_of_the_pool(
    service: RunningService,
) -> None:
    """Spec 4.2: a pooled domain needs active inboxes on its order; the list must not offer
    what attach would refuse."""
    with service.partner() as client:
        order = placed(client, counts(new_workspace(client), a=2))
        names = [item["domain"] for item in order["domains"]]
        assert add(client, *names).json()["data"]["added"] == 2
        assert client.post(f"/orders/{order['id']}/cancel").status_code == 200
        service.wait_projections()
        assert not set(conditions(client)) & set(names)  # as after POST /pool/remove
        available = client.get("/pool/domains", params={"condition": "available"}).json()
        assert not {row["domain"] for row in available["data"]} & set(names)
        error_of(attach(client, new_workspace(client), 1), 409, "insufficient_inventory")


def test_a_pool_add_that_raced_the_cancel_is_undone_when_the_cancel_finishes(
    service_factory: Any,
) -> None:
    """An add checks the order without saving it, so it can land just after the cancel took
    the order's domains out of the pool. The end of the grace window takes them out again."""
    clock = ManualClock()
    service = service_factory(clock=clock, cancel_grace_seconds=30)
    with service.partner() as client:
        order = placed(client, counts(new_workspace(client), a=1))
        name = order["domains"][0]["domain"]
        assert client.post(f"/orders/{order['id']}/cancel").status_code == 200
        _add_as_if_checked_before_the_cancel(service, order, name)
        service.wait_projections()
        assert conditions(client).get(name) == "available"  # the race's leftover
        clock.advance(31)
        wait_status(client, order["id"], "cancelled")
        service.wait_projections()
        assert name not in conditions(client)


def _add_as_if_checked_before_the_cancel(
    service: RunningService, order: dict[str, Any], name: str
) -> None:
    container = service.container
    view = service.container.store.find(parse_id("ord", order["id"]), Order)
    assert isinstance(view, Order)
    pool = pool_domain_for(container, view.org_id, view.environment, name)
    at = container.clock.now()
    dom_id = order["domains"][0]["id"]
    pool.add(dom_id=dom_id, order_id=order["id"], inbox_count=1, available_at=at, at=at)
    container.store.save(pool)


def test_a_pool_add_whose_order_was_cancelled_after_its_check_is_refused(
    service: RunningService, monkeypatch: Any
) -> None:
    """The add reads the order again once its records are stored: a cancel accepted between
    the check and the save leaves no pool row behind, and the add says no."""
    from domain.errors import DomainError
    from services.orders import use_cases as orders
    from services.pool import inventory as pool_inventory
    from services.pool.commands import AddPoolDomains

    org = service.new_org()
    secret = service.new_key(org, "test")
    principal = service.container.accounts.authenticate(secret)
    assert principal is not None
    with service.client(secret) as client:
        order = placed(client, counts(new_workspace(client), a=1))
        name = order["domains"][0]["domain"]
        real_check = pool_inventory.check_eligibility

        def check_then_cancel(*args: Any) -> Any:
            checks = real_check(*args)
            orders.cancel_order(service.container, principal, order["id"])
            return checks

        monkeypatch.setattr(pool_inventory, "check_eligibility", check_then_cancel)
        try:
            pool_inventory.add_domains(service.container, principal, AddPoolDomains(domains=[name]))
        except DomainError as refused:
            assert refused.code == "domains_not_submittable"
            assert refused.details == {"domains": [{"domain": name, "reason": "order_cancelled"}]}
        else:
            raise AssertionError("the add was accepted")
        assert client.get(f"/orders/{order['id']}").json()["data"]["status"] == "cancel_scheduled"
        service.wait_projections()
        assert name not in conditions(client)
