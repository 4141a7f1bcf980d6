"""The sandbox clock (decisions.md 6) through HTTP: reading and moving it, grace windows that
end on it, the concurrency of two advances, and live keys and other organizations untouched."""

from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime
from typing import Any

from conftest import RunningService, ServiceFactory
from pool_support import attached, pooled, released
from sandbox_clock_support import advance, completed_order
from test_orders_live import event_names, wait_status
from test_orders_sandbox import counts, error_of, new_workspace, place
from test_wallet_purchase import credit

from infra.clock import ManualClock, iso
from services.sandbox.clock import _note_sweep as note_sweep
from services.sandbox.clock import load_clock

START = 1_800_000_000.0


def _service(service_factory: ServiceFactory) -> RunningService:
    return service_factory(clock=ManualClock(START), cancel_grace_seconds=300)


def test_clock_reads_and_moves_with_checked_bodies(service_factory: ServiceFactory) -> None:
    service = _service(service_factory)
    org = service.new_org()
    with service.client(service.new_key(org)) as sandbox:
        assert sandbox.get("/sandbox/clock").json()["data"] == {
            "now": iso(START), "advanced_seconds": 0
        }
        moved = advance(sandbox, seconds=90)
        assert moved["now"] == iso(START + 90) and moved["advanced_seconds"] == 90
        assert moved["came_due"] == {
            "grace_windows": 0, "warm_periods": 0, "renewals": 0, "lapses": 0,
            "webhook_attempts": 0,
        }
        # `to` moves the clock to that moment exactly, a fraction of a second included.
        between = datetime.fromtimestamp(START + 1800.25, tz=UTC).isoformat()
        moved = advance(sandbox, to=between)
        assert (moved["now"], moved["advanced_seconds"]) == (iso(START + 1800.25), 1800)
        assert sandbox.get("/sandbox/clock").json()["data"]["now"] == iso(START + 1800.25)
        target = datetime.fromtimestamp(START + 3600, tz=UTC).isoformat()
        moved = advance(sandbox, to=target)
        assert (moved["now"], moved["advanced_seconds"]) == (iso(START + 3600), 3600)
        for body, field in (
            ({"seconds": 0}, "seconds"),
            ({"seconds": 31_622_401}, "seconds"),
            ({}, "seconds"),
            ({"seconds": 5, "to": target}, "to"),
            ({"to": target}, "to"),  # not later than now
            ({"to": "yesterday"}, "to"),
            ({"minutes": 5}, "minutes"),
        ):
            answer = sandbox.post("/sandbox/clock/advance", json=body)
            assert error_of(answer, 400, "invalid_request")["field"] == field, body
        # Timestamps written on the sandbox's resources are on its clock.
        workspace = new_workspace(sandbox)
        order = place(sandbox, counts(workspace, a=1)).json()["data"]
        assert order["created_at"] == iso(START + 3600)
    with service.client(service.new_key(org, "test", "limited")) as limited:
        assert limited.get("/sandbox/clock").json()["data"]["advanced_seconds"] == 3600
        error_of(limited.post("/sandbox/clock/advance", json={"seconds": 5}), 403, "forbidden")
    with service.client(service.new_key(org, "live")) as live:
        error_of(live.get("/sandbox/clock"), 404, "not_found")
        error_of(live.post("/sandbox/clock/advance", json={"seconds": 5}), 404, "not_found")
        # A live key has no clock at all: not its body, nor its preset, is looked at first.
        error_of(live.post("/sandbox/clock/advance", json={"minutes": 5}), 404, "not_found")
    for preset in ("limited", "read"):
        with service.client(service.new_key(org, "live", preset)) as live:
            error_of(live.get("/sandbox/clock"), 404, "not_found")
            answer = live.post("/sandbox/clock/advance", json={"seconds": 5})
            error_of(answer, 404, "not_found")


def test_idempotency_key_answers_the_first_advance(service_factory: ServiceFactory) -> None:
    service = _service(service_factory)
    with service.partner() as sandbox:
        key = str(uuid.uuid4())
        first = advance(sandbox, key=key, seconds=60)
        assert advance(sandbox, key=key, seconds=60) == first
        assert sandbox.get("/sandbox/clock").json()["data"]["advanced_seconds"] == 60


def test_cancel_then_advance_past_the_grace_window(service_factory: ServiceFactory) -> None:
    service = _service(service_factory)
    with service.partner() as sandbox:
        workspace = new_workspace(sandbox)
        order = completed_order(sandbox, workspace)
        name = order["domains"][0]["domain"]
        assert sandbox.post(f"/orders/{order['id']}/cancel").status_code == 200
        assert advance(sandbox, seconds=299)["came_due"]["grace_windows"] == 0
        assert sandbox.get(f"/orders/{order['id']}").json()["data"]["status"] == "cancel_scheduled"
        assert advance(sandbox, seconds=1)["came_due"]["grace_windows"] == 1
        cancelled = sandbox.get(f"/orders/{order['id']}").json()["data"]
        assert cancelled["status"] == "cancelled"
        # Run at the end of its grace window, on the sandbox clock.
        assert cancelled["updated_at"] == iso(START + 300)
        service.wait_projections()
        types = [e["type"] for e in sandbox.get("/events", params={"per_page": 100}).json()["data"]]
        assert "order.cancelled" in types
        reuse = counts(workspace, a=1, domains=[{"domain": name, "suite": "suite_a"}])
        again = place(sandbox, reuse)
        assert again.status_code == 201, again.text
        assert advance(sandbox, seconds=3600)["came_due"]["grace_windows"] == 0


def test_two_advances_at_once_run_each_due_item_once(service_factory: ServiceFactory) -> None:
    service = _service(service_factory)
    with service.partner() as sandbox:
        workspace = new_workspace(sandbox)
        orders = [completed_order(sandbox, workspace) for _ in range(3)]
        for order in orders:
            assert sandbox.post(f"/orders/{order['id']}/cancel").status_code == 200
        answers: list[dict[str, Any]] = []

        def move() -> None:
            answers.append(advance(sandbox, seconds=400))

        threads = [threading.Thread(target=move) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sum(a["came_due"]["grace_windows"] for a in answers) == 3
        assert sandbox.get("/sandbox/clock").json()["data"]["advanced_seconds"] == 800
        for order in orders:
            assert event_names(service, order["id"]).count("Cancelled") == 1


def test_an_advance_cut_short_is_finished_by_the_next(service_factory: ServiceFactory) -> None:
    service = _service(service_factory)
    org_id = service.new_org()
    with service.client(service.new_key(org_id)) as sandbox:
        order = completed_order(sandbox)
        assert sandbox.post(f"/orders/{order['id']}/cancel").status_code == 200
        # A process that saved the advance and died before running what came due.
        clock = load_clock(service.container, org_id)
        clock.advance(600, START)
        service.container.store.save(clock)
        assert sandbox.get(f"/orders/{order['id']}").json()["data"]["status"] == "cancel_scheduled"
        assert advance(sandbox, seconds=1)["came_due"]["grace_windows"] == 1
        assert sandbox.get(f"/orders/{order['id']}").json()["data"]["status"] == "cancelled"


def test_live_and_other_organizations_keep_their_time(service_factory: ServiceFactory) -> None:
    service = _service(service_factory)
    org = service.new_org()
    credit(service, org, 50_000)
    with service.client(service.new_key(org, "live")) as live, service.partner() as other:
        workspace = new_workspace(live)
        live_order = place(live, counts(workspace, a=1)).json()["data"]
        assert live.post(f"/orders/{live_order['id']}/cancel").status_code == 200
        with service.client(service.new_key(org)) as sandbox:
            advance(sandbox, seconds=31_622_400)
            assert sandbox.get("/sandbox/clock").json()["data"]["advanced_seconds"] == 31_622_400
        assert other.get("/sandbox/clock").json()["data"] == {"now": iso(START), "advanced_seconds": 0}
        assert new_workspace(other)
        assert live.get(f"/orders/{live_order['id']}").json()["data"]["status"] == "cancel_scheduled"
        second = place(live, counts(workspace, a=1)).json()["data"]
        assert second["created_at"] == iso(START)
        service.container.clock.base.advance(301)  # type: ignore[attr-defined]
        wait_status(live, live_order["id"], "cancelled")


def test_a_moved_clock_keeps_running_with_real_time(service_factory: ServiceFactory) -> None:
    """After an advance the sandbox clock runs on from its new time: a grace window started
    then ends 300 real seconds later, with no second advance."""
    clock = ManualClock(START)
    service = service_factory(clock=clock, cancel_grace_seconds=300)
    with service.partner() as sandbox:
        order = completed_order(sandbox)
        advance(sandbox, seconds=86_400)
        assert sandbox.post(f"/orders/{order['id']}/cancel").status_code == 200
        clock.advance(301)
        cancelled = wait_status(sandbox, order["id"], "cancelled")
        assert cancelled["updated_at"] == iso(START + 86_400 + 300)


def test_a_restart_finishes_an_advance_cut_short(service_factory: ServiceFactory) -> None:
    clock = ManualClock(START)
    first = service_factory(clock=clock, roles=["gateway", "projections"])
    org_id = first.new_org()
    key = first.new_key(org_id)
    with first.client(key) as sandbox:
        order = place(sandbox, counts(new_workspace(sandbox), a=1)).json()["data"]
        assert sandbox.post(f"/orders/{order['id']}/cancel").status_code == 200
    # The advance's process noted it, saved the clock's move, and died.
    note_sweep(first.container, org_id)
    moved = load_clock(first.container, org_id)
    moved.advance(600, START)
    first.container.store.save(moved)
    restarted = service_factory(clock=clock)  # its worker finishes the advance
    with restarted.client(key) as sandbox:
        wait_status(sandbox, order["id"], "cancelled")
        assert sandbox.get("/sandbox/clock").json()["data"]["advanced_seconds"] == 600
    assert not load_clock(restarted.container, org_id).unsettled


def test_an_advance_to_a_moment_reaches_it(service_factory: ServiceFactory) -> None:
    """`to` ends the advance at the moment named, even a fraction of a second after the last
    whole one: an advance to an order's `cancel_at` ends its grace window."""
    clock = ManualClock(START)
    service = service_factory(clock=clock, cancel_grace_seconds=300)
    with service.partner() as sandbox:
        order = completed_order(sandbox)
        cancel = sandbox.post(f"/orders/{order['id']}/cancel").json()["data"]
        clock.advance(0.6)  # the partner reads `cancel_at` and sends the advance a bit later
        moved = advance(sandbox, to=cancel["cancel_at"])
        assert moved["now"] == cancel["cancel_at"]
        assert moved["came_due"]["grace_windows"] == 1
        assert sandbox.get(f"/orders/{order['id']}").json()["data"]["status"] == "cancelled"
        again = sandbox.post("/sandbox/clock/advance", json={"to": moved["now"]})
        assert error_of(again, 400, "invalid_request")["field"] == "to"


def test_an_advance_to_just_before_a_due_moment_leaves_it_due(service: RunningService) -> None:
    """On the running clock too: the time an advance takes to run what came due does not
    carry it past its `to`, so an order is still `cancel_scheduled` a millisecond before
    its `cancel_at`."""
    with service.partner() as sandbox:
        order = completed_order(sandbox)
        cancel = sandbox.post(f"/orders/{order['id']}/cancel").json()["data"]
        cancel_at = datetime.fromisoformat(cancel["cancel_at"]).timestamp()
        moved = advance(sandbox, to=iso(cancel_at - 0.001))
        assert moved["now"] == iso(cancel_at - 0.001)
        assert moved["came_due"]["grace_windows"] == 0, moved
        view = sandbox.get(f"/orders/{order['id']}").json()["data"]
        assert view["status"] == "cancel_scheduled", view
        assert advance(sandbox, seconds=1)["came_due"]["grace_windows"] == 1


def test_pool_jobs_finish_on_the_sandbox_clock(service_factory: ServiceFactory) -> None:
    """A pool attach and release of a moved sandbox finish at its time, not before they began."""
    service = _service(service_factory)
    with service.partner() as sandbox:
        names = pooled(sandbox, 1)
        advance(sandbox, seconds=14 * 86_400)
        now = iso(START + 14 * 86_400)
        reservation = attached(sandbox, new_workspace(sandbox), 1)
        assert reservation["created_at"] == reservation["completed_at"] == now
        release = released(sandbox, *names)
        assert release["created_at"] == now
        assert release["completed_at"] is not None and release["completed_at"] >= now
