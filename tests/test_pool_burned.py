"""Burned-domain jobs (`brj_`): the burned result leaves the pool, an assigned domain is
replaced (`prp_`). The jobs are started through `services.fulfillment.burned_domains` (what the gRPC
fulfillment service calls) and observed over HTTP."""

from __future__ import annotations

import time
from typing import Any

import pytest
from conftest import RunningService
from pool_support import add, attached, conditions, ordered_domains, pooled
from sandbox_clock_support import advance
from test_orders_sandbox import counts, error_of, new_workspace, placed

from audit.replay import replay
from domain.errors import NotFound
from services.fulfillment.commands import MarkDomainBurned
from services.fulfillment.reports import mark_domain_burned


def burn(service: RunningService, name: str) -> dict[str, Any]:
    """The job a fulfillment operator's MarkDomainBurned (no request id) starts."""
    command = MarkDomainBurned(domain=name, reason="blocklisted")
    job = mark_domain_burned(service.container, "ops@fulfillment", command).job
    assert job is not None
    return job


def test_unknown_domain_is_not_found(service: RunningService) -> None:
    with pytest.raises(NotFound):
        burn(service, "nobody-owns-this.com")


def test_burned_domain_leaves_the_pool_and_cannot_be_added(service: RunningService) -> None:
    with service.partner() as client:
        [pooled_name] = pooled(client, 1)
        [outside] = ordered_domains(client, a=1)
        job = burn(service, pooled_name.upper())
        assert job["id"].startswith("brj_") and job["status"] == "completed"
        assert job["domain"]["domain"] == pooled_name and job["replacement_id"] is None
        assert job["pool_condition"] == "removed"
        assert client.get(f"/pool/burned_domain_jobs/{job['id']}").json()["data"] == job
        assert conditions(client) == {}
        burn(service, outside)
        error = error_of(add(client, pooled_name, outside), 409, "domains_not_submittable")
        assert error["details"]["domains"] == [
            {"domain": pooled_name, "reason": "burned"},
            {"domain": outside, "reason": "burned"},
        ]
    with service.partner() as other:
        error_of(other.get(f"/pool/burned_domain_jobs/{job['id']}"), 404, "not_found")


def test_burned_assigned_domain_is_replaced(service: RunningService) -> None:
    with service.partner() as client:
        names = pooled(client, 2)
        workspace = new_workspace(client)
        reservation = attached(client, workspace, 1)
        burned = reservation["domains"][0]["domain"]
        spare = next(n for n in names if n != burned)
        job = burn(service, burned)
        assert job["replacement_id"].startswith("prp_")
        replacement = client.get(f"/pool/replacements/{job['replacement_id']}").json()["data"]
        assert replacement["status"] == "completed" and replacement["job_id"] == job["id"]
        assert replacement["burned_domain"]["domain"] == burned
        assert replacement["replacement_domain"]["domain"] == spare
        assert replacement["workspace_id"] == workspace
        assert conditions(client) == {spare: "assigned"}
        again = burn(service, spare)
        failed = client.get(f"/pool/replacements/{again['replacement_id']}").json()["data"]
        assert failed["status"] == "failed" and failed["reason"] == "insufficient_inventory"
        assert conditions(client) == {spare: "assigned"}
        service.wait_projections()
        # Spec 6: a domain that needs a replacement gets domain.action_required.
        (row,) = client.get("/domains", params={"domain": spare}).json()["data"]
        assert (row["status"], row["reason"]) == ("action_required", "replacement_needed")
        events = client.get("/events", params={"per_page": 100}).json()["data"]
        (needed,) = [e for e in events if e["type"] == "domain.action_required"]
        assert needed["data"]["id"] == row["id"] and needed["data"]["domain"] == spare
        assert needed["data"]["replacement_id"] == again["replacement_id"]
        # Replaced once a pool domain is there: the row no longer needs the partner.
        pooled(client, 1)
        replaced = burn(service, spare)
        assert (
            client.get(f"/pool/replacements/{replaced['replacement_id']}").json()["data"]["status"]
            == "completed"
        )
        service.wait_projections()
        (row,) = client.get("/domains", params={"domain": spare}).json()["data"]
        assert (row["status"], row.get("reason")) == ("active", None)
        # Spec 3: the move back to `active` is accompanied by domain.connected.
        assert connected_after_need(client, row["id"]) == replaced["replacement_id"]
        types = {e["type"] for e in events}
        assert {
            "pool.domain_burned",
            "pool.domain_retired",
            "pool.replacement_completed",
            "pool.replacement_failed",
            "pool.burned_domain_job_completed",
        } <= types


def connected_after_need(client: Any, dom_id: str) -> str:
    """The `replacement_id` or `release_id` of the domain.connected that followed the
    domain's domain.action_required, the newest event about it."""
    events = client.get("/events", params={"per_page": 100}).json()["data"]
    about = [e for e in events if e["data"].get("id") == dom_id and e["type"].startswith("domain.")]
    assert [e["type"] for e in about[:2]] == ["domain.connected", "domain.action_required"]
    assert about[0]["data"]["status"] == "active"
    return str(about[0]["data"].get("replacement_id") or about[0]["data"].get("release_id"))


def test_releasing_a_burned_domain_that_needed_a_replacement(service: RunningService) -> None:
    """The partner's other answer to `replacement_needed`: release the burned domain. It
    leaves the pool and, on its own order still, is `active` again (domain.connected)."""
    with service.partner() as client:
        pooled(client, 1)
        reservation = attached(client, new_workspace(client), 1)
        burned = reservation["domains"][0]["domain"]
        assert burn(service, burned)["replacement_id"] is not None
        service.wait_projections()
        (row,) = client.get("/domains", params={"domain": burned}).json()["data"]
        assert (row["status"], row["reason"]) == ("action_required", "replacement_needed")
        release = client.post("/pool/release", json={"domains": [burned]})
        assert release.status_code == 202, release.text
        release_id = release.json()["data"]["id"]
        deadline = time.monotonic() + 30
        while client.get(f"/pool/releases/{release_id}").json()["data"]["status"] != "completed":
            assert time.monotonic() < deadline, "the release did not complete"
            time.sleep(0.1)
        service.wait_projections()
        assert conditions(client) == {}
        (row,) = client.get("/domains", params={"domain": burned}).json()["data"]
        assert (row["status"], row.get("reason")) == ("active", None)
        assert connected_after_need(client, row["id"]) == release_id
        # It left the pool, and the pool's events say so as for every other way out.
        removed = client.get("/events", params={"type": "pool.domain_removed"}).json()["data"]
        assert [(e["data"]["domain"], e["data"]["status"]) for e in removed] == [
            (burned, "removed")
        ]


def test_pool_read_models_replay_identically(service: RunningService) -> None:
    with service.partner() as client:
        names = pooled(client, 3)
        reservation = attached(client, new_workspace(client), 1)
        burn(service, reservation["domains"][0]["domain"])
        client.post("/pool/remove", json={"domains": names})
    service.wait_projections()
    c = service.container
    report = replay(c.settings, c.store, c.read_models)
    assert report.identical, report.as_json()
    compared = {t.table: t for t in report.tables}
    assert compared["pool_domains"].replayed_rows == 3


def test_a_burned_result_is_about_the_live_domain_of_its_name(service: RunningService) -> None:
    """Sandbox names are made up: one may also be a live domain elsewhere. A provider's
    burned result is about the real one, not a sandbox's, even a pooled sandbox one."""
    with service.partner() as sandbox:
        [name] = pooled(sandbox, 1)
        with service.partner("live") as live:
            imported = live.post("/domains/import", json={"domains": [name]})
            assert imported.status_code == 201, imported.text
            service.wait_projections()
            job = burn(service, name)
            assert live.get(f"/pool/burned_domain_jobs/{job['id']}").status_code == 200
        error_of(sandbox.get(f"/pool/burned_domain_jobs/{job['id']}"), 404, "not_found")
        assert conditions(sandbox) == {name: "available"}


def test_a_burned_domain_on_no_pool_is_named_and_stamped_on_the_sandbox_clock(
    service: RunningService,
) -> None:
    """`pool.domain_burned` of a domain never pooled names its `dom_` id and order; the job
    of a sandbox domain carries its organization's sandbox time."""
    with service.partner() as client:
        order = placed(client, counts(new_workspace(client), a=1))
        item = order["domains"][0]
        now = advance(client, seconds=30 * 86_400)["now"]
        job = burn(service, item["domain"])
        assert now <= job["created_at"] < now[:10] + "T99"  # the sandbox's day, not today
        service.wait_projections()
        events = client.get("/events", params={"type": "pool.domain_burned"}).json()["data"]
        (burned,) = [e for e in events if e["type"] == "pool.domain_burned"]
        assert (burned["data"]["id"], burned["data"]["order_id"]) == (item["id"], order["id"])


def test_a_burned_domain_is_never_picked_from_inventory(service: RunningService) -> None:
    """Released by its order, a burned name is the partner's still, but the service does not
    hand it to the next customer unasked; named, it is used."""
    with service.partner() as client:
        workspace = new_workspace(client)
        first = placed(client, counts(workspace, a=1))
        burned = first["domains"][0]["domain"]
        burn(service, burned)
        assert client.post(f"/orders/{first['id']}/cancel").status_code == 200
        advance(client, seconds=300)
        service.wait_projections()
        picked = placed(client, counts(workspace, a=1))
        assert [d["domain"] for d in picked["domains"]] != [burned]
        named = placed(client, {**counts(workspace, a=1), "domains": [
            {"domain": burned, "suite": "suite_a"}]})
        assert named["status"] == "completed"
        assert [d["domain"] for d in named["domains"]] == [burned]
