"""An order whose picks of free inventory other orders keep taking first is placed all the
same, with new names bought for it: the partner named none of those domains, so a refusal
naming one (`domain_already_in_active_order`) would be about a choice the service made."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import ServiceFactory
from test_domains_inventory import domains, wait_for
from test_orders_sandbox import counts, new_workspace, place, placed

from infra.clock import ManualClock
from services.domains.claims import DomainsHeld
from services.orders import use_cases


def test_lost_inventory_picks_end_in_bought_names(
    service_factory: ServiceFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = ManualClock()
    service = service_factory(clock=clock)
    with service.partner() as client:
        workspace = new_workspace(client)
        first = placed(client, counts(workspace, a=3))  # three free domains once cancelled
        assert client.post(f"/orders/{first['id']}/cancel").status_code in (200, 202)
        clock.advance(service.container.settings.cancel_grace_seconds + 1)
        assert wait_for(lambda: len(domains(client, category="inventory")) == 3)
        service.wait_projections()
        accept = use_cases._accept_plan
        picks: list[str] = []

        def others_take_inventory(*args: Any) -> Any:
            plan = args[-1]
            taken = [d["domain"] for d in plan.domains if d["source"] == "inventory"]
            if taken:  # as if another order had claimed it between the read and the save
                picks.extend(taken)
                raise DomainsHeld(taken)
            return accept(*args)

        monkeypatch.setattr(use_cases, "_accept_plan", others_take_inventory)
        answer = place(client, counts(workspace, a=1))
        assert answer.status_code == 201, answer.text
        (domain,) = answer.json()["data"]["domains"]
        # Each attempt picked the next free domain, each taken: then new names were bought.
        assert sorted(picks) == sorted(d["domain"] for d in first["domains"])
        assert domain["source"] == "generated" and domain["domain"] not in picks
