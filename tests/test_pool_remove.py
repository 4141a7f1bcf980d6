"""POST /pool/remove exactly per spec 4.1: the body rules and one test per numbered rule."""

from __future__ import annotations

from conftest import RunningService, ServiceFactory
from pool_support import (
    add,
    attach,
    attached,
    conditions,
    live_ordered_domains,
    pooled,
    remove,
    wait_for,
)
from test_orders_sandbox import error_of, new_workspace

from infra.clock import ManualClock

DAY = 24 * 3600


def test_body_rules(service: RunningService) -> None:
    with service.partner() as client:
        error = error_of(client.post("/pool/remove", json={}), 400, "invalid_request")
        assert error["field"] == "domains"
        error = error_of(remove(client), 400, "invalid_request")
        assert error["field"] == "domains"
        too_many = [f"d{i}.com" for i in range(26)]
        assert error_of(remove(client, *too_many), 400, "invalid_request")["field"] == "domains"
        error = error_of(remove(client, "a.com", "b.com", "A.com"), 400, "invalid_request")
        # "items unique" is a rule of the list (spec 4.1): the list is the field.
        assert (error["field"], error["details"]) == ("domains", {"duplicate": "a.com"})
        extra = client.post("/pool/remove", json={"domains": ["a.com"], "force": True})
        assert error_of(extra, 400, "invalid_request")["field"] == "force"
        wrong = client.post("/pool/remove", json={"domains": [7]})
        assert error_of(wrong, 400, "invalid_request")["field"] == "domains[0]"
    with service.partner(preset="read") as reader:
        error_of(remove(reader, "a.com"), 403, "forbidden")


def test_removal_answers_counts_per_spec(service: RunningService) -> None:
    with service.partner() as client:
        names = pooled(client, 3)
        response = remove(client, *names[:2])
        assert response.status_code == 200, response.text
        data = response.json()["data"]
        assert data == {
            "removed": 2,
            "absent": 0,
            "inbox_count": 6,
            "domains": [{"domain": n, "outcome": "removed"} for n in names[:2]],
        }
        assert conditions(client) == {names[2]: "available"}


def test_rule_1_available_warming_and_idle_quarantined_are_removed(
    service_factory: ServiceFactory,
) -> None:
    clock = ManualClock()
    service = service_factory(clock=clock, fulfillment_step_seconds=0.05)
    org = service.new_org()
    with service.client(service.new_key(org, "live")) as client:
        first, second, third = live_ordered_domains(service, clock, client, org, a=3)
        add(client, first, second)
        clock.advance(DAY)
        reservation = attach(client, new_workspace(client), 1).json()["data"]
        rested = reservation["domains"][0]["domain"]
        available = first if rested == second else second
        clock.advance(1)
        wait_for(lambda: conditions(client)[rested] == "assigned", "the attach")
        client.post("/pool/release", json={"domains": [rested]})
        clock.advance(1)
        wait_for(lambda: conditions(client)[rested] == "idle_quarantined", "the release")
        add(client, third)
        assert conditions(client) == {
            available: "available", rested: "idle_quarantined", third: "warming"
        }
        response = remove(client, available, rested, third)
        assert response.status_code == 200, response.text
        data = response.json()["data"]
        assert (data["removed"], data["absent"], data["inbox_count"]) == (3, 0, 9)
        assert conditions(client) == {}


def test_rule_2_any_linked_domain_fails_the_whole_request(service: RunningService) -> None:
    with service.partner() as client:
        names = pooled(client, 2)
        reservation = attached(client, new_workspace(client), 1)
        assigned = reservation["domains"][0]["domain"]
        free = next(n for n in names if n != assigned)
        error = error_of(remove(client, free, assigned), 409, "pool_domains_linked")
        assert error["details"]["domains"] == [{"domain": assigned, "condition": "assigned"}]
        assert conditions(client) == {free: "available", assigned: "assigned"}


def test_rule_3_unknown_or_already_removed_is_absent_and_repeat_is_safe(
    service: RunningService,
) -> None:
    with service.partner() as client:
        [name] = pooled(client, 1)
        first = remove(client, name, "never-pooled.com").json()["data"]
        assert first["domains"] == [
            {"domain": name, "outcome": "removed"},
            {"domain": "never-pooled.com", "outcome": "absent"},
        ]
        assert (first["removed"], first["absent"], first["inbox_count"]) == (1, 1, 3)
        again = remove(client, name, "never-pooled.com")
        assert again.status_code == 200
        assert again.json()["data"] == {
            "removed": 0,
            "absent": 2,
            "inbox_count": 0,
            "domains": [
                {"domain": name, "outcome": "absent"},
                {"domain": "never-pooled.com", "outcome": "absent"},
            ],
        }


def test_rule_4_a_removed_paid_domain_can_be_added_again(service: RunningService) -> None:
    with service.partner() as client:
        [name] = pooled(client, 1)
        assert remove(client, name).json()["data"]["removed"] == 1
        assert conditions(client) == {}
        again = add(client, name)
        assert again.status_code == 200, again.text
        assert again.json()["data"]["domains"][0]["outcome"] == "added"
        assert conditions(client) == {name: "available"}
