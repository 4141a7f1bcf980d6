"""Live pool: warm-up on the clock, attach and release finished by the pool worker."""

from __future__ import annotations

from conftest import ServiceFactory
from pool_support import add, attach, conditions, live_ordered_domains, remove, wait_for
from test_orders_sandbox import error_of, new_workspace

from infra.clock import ManualClock

STEP = 0.05
REST = 10 * STEP  # warm-up and quarantine: 10 simulated steps (services/pool/inventory.py)


def test_live_pool_warms_then_attaches_and_releases_through_the_worker(
    service_factory: ServiceFactory,
) -> None:
    clock = ManualClock()
    service = service_factory(clock=clock, fulfillment_step_seconds=STEP)
    org = service.new_org()
    with service.client(service.new_key(org, "live")) as client:
        names = live_ordered_domains(service, clock, client, org, a=2)
        added = add(client, *names).json()["data"]
        assert {d["condition"] for d in added["domains"]} == {"warming"}
        assert added["domains"][0]["available_at"] is not None
        workspace = new_workspace(client)
        error_of(attach(client, workspace, 1), 409, "insufficient_inventory")
        clock.advance(REST - 0.01)
        error_of(attach(client, workspace, 1), 409, "insufficient_inventory")
        clock.advance(0.01)
        assert set(conditions(client).values()) == {"available"}

        reservation = attach(client, workspace, 1).json()["data"]
        assert reservation["status"] == "in_progress"
        taken = reservation["domains"][0]["domain"]
        assert conditions(client)[taken] == "reserved"
        error_of(remove(client, taken), 409, "pool_domains_linked")
        clock.advance(1)
        wait_for(
            lambda: client.get(f"/pool/reservations/{reservation['id']}").json()["data"]["status"]
            == "completed",
            "the reservation to complete",
        )
        # The reservation is read from its aggregate, the pool list from a projection.
        wait_for(lambda: conditions(client)[taken] == "assigned", "the domain to show assigned")

        release = client.post("/pool/release", json={"domains": [taken]}).json()["data"]
        assert release["status"] == "in_progress"
        assert conditions(client)[taken] == "releasing"
        clock.advance(1)
        wait_for(lambda: conditions(client)[taken] == "idle_quarantined", "the release")
        assert client.get(f"/pool/releases/{release['id']}").json()["data"]["status"] == (
            "completed"
        )
        clock.advance(REST)
        assert conditions(client)[taken] == "available"
