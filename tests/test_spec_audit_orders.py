"""Spec audit of orders and quotes: behaviour checked against the letter of the spec and
decisions.md (order `licenses` shape, named-domain count check before inventory lookups,
the default webhook retry schedule)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import RunningService
from test_orders_sandbox import counts, error_of, new_workspace, place, placed

from infra.settings import DEFAULT_RETRY_SCHEDULE
from webhooks.deliveries import attempts_allowed


def test_order_licenses_carry_both_suites(service: RunningService) -> None:
    # decisions.md 3: the order answers `licenses` (`suite_a`, `suite_b`), even when one is 0.
    with service.partner() as client:
        workspace = new_workspace(client)
        response = place(client, counts(workspace, a=1))
        assert response.status_code == 201, response.text
        order = response.json()["data"]
        assert order["licenses"] == {"suite_a": 3, "suite_b": 0}
        fetched = client.get(f"/orders/{order['id']}").json()["data"]
        assert fetched["licenses"] == {"suite_a": 3, "suite_b": 0}


@pytest.mark.parametrize("path", ["/orders", "/quotes"])
@pytest.mark.parametrize("named", [1, 3])
def test_named_count_mismatch_comes_before_ownership(
    service: RunningService, path: str, named: int
) -> None:
    # decisions.md 3: named domains must match their suite's count (`domain_count_mismatch`,
    # 400); a body that breaks it is refused as such even for names the account does not own.
    with service.partner() as client:
        workspace = new_workspace(client)
        domains: list[dict[str, Any]] = [
            {"domain": f"unowned{i}-audit.com", "suite": "suite_a"} for i in range(named)
        ]
        body = counts(workspace, a=2, domains=domains)
        response = place(client, body) if path == "/orders" else client.post(path, json=body)
        error = error_of(response, 400, "domain_count_mismatch")
        assert error["field"] == "domains"


def test_default_retry_schedule_spreads_five_attempts_over_a_day() -> None:
    # Spec 6 / decisions.md 1: up to 5 attempts over 24 hours; every wait is used.
    assert attempts_allowed(DEFAULT_RETRY_SCHEDULE) == 5
    assert len(DEFAULT_RETRY_SCHEDULE) == 4
    assert 12 * 3600 <= sum(DEFAULT_RETRY_SCHEDULE) <= 24 * 3600
    ratios = {b / a for a, b in zip(DEFAULT_RETRY_SCHEDULE[:-1], DEFAULT_RETRY_SCHEDULE[1:], strict=True)}
    assert len(ratios) == 1 and ratios.pop() > 1  # exponential backoff


@pytest.mark.parametrize("url", ["not a url", "ftp://cdn.example.com/me.png", "https://[::1/me.png"])
def test_invalid_picture_url_sends_order_to_action_required(
    service: RunningService, url: str
) -> None:
    # Spec 3: "partner attention needed | e.g. a private or invalid profile-picture URL |
    # action_required"; decisions.md 5: one that is not https goes action_required too.
    with service.partner() as client:
        order = placed(client, counts(new_workspace(client), a=1, profile_picture_url=url))
        assert order["status"] == "action_required"
        pending = client.get("/orders/pending", params={"order_id": order["id"]}).json()["data"]
        assert [row["id"] for row in pending] == [order["pending_action_id"]]


def test_cancelling_a_waiting_order_closes_its_pending_action(service: RunningService) -> None:
    # Nothing is left half-open: once the order's cancellation is accepted, its pending action
    # shows `cancelled` and can no longer be resolved.
    with service.partner() as client:
        body = counts(new_workspace(client), a=1, profile_picture_url="http://10.0.0.1/me.png")
        order = placed(client, body)
        assert order["status"] == "action_required"
        cancelled = client.post(f"/orders/{order['id']}/cancel")
        assert cancelled.status_code == 200, cancelled.text
        assert cancelled.json()["data"]["status"] == "cancel_scheduled"
        rows = client.get("/orders/pending", params={"order_id": order["id"]}).json()["data"]
        assert [(row["id"], row["status"]) for row in rows] == [
            (order["pending_action_id"], "cancelled")
        ]
        listed = client.get("/orders/pending", params={"status": "cancelled"}).json()["data"]
        assert [row["id"] for row in listed] == [order["pending_action_id"]]
        resolve = client.post(
            f"/orders/pending/{order['pending_action_id']}/resolve",
            json={"profile_picture_url": "https://cdn.example.com/me.png"},
        )
        assert resolve.status_code == 409, resolve.text


def test_a_cancel_retried_with_its_idempotency_key_answers_the_first(
    service: RunningService,
) -> None:
    """A cancel whose answer was lost, retried with its key, answers what the first did (a
    retry without one is refused: the order is no longer cancellable)."""
    with service.partner() as client:
        order = placed(client, counts(new_workspace(client), a=1))
        key = {"Idempotency-Key": f"cancel-{order['id']}"}
        first = client.post(f"/orders/{order['id']}/cancel", headers=key)
        assert first.status_code == 200, first.text
        again = client.post(f"/orders/{order['id']}/cancel", headers=key)
        assert (again.status_code, again.headers["Idempotent-Replayed"]) == (200, "true")
        assert again.json() == first.json()
        error_of(client.post(f"/orders/{order['id']}/cancel"), 409, "order_state_conflict")
