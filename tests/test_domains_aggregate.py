"""The Domain aggregate's moves (the interface orders use), without a service."""

from __future__ import annotations

import pytest

from domain.domains import Domain
from domain.errors import DomainError


def new() -> Domain:
    return Domain(
        org_id="org_1",
        environment="test",
        name="acme.com",
        source="purchased",
        auto_renew=True,
        price_cents=1299,
        renewal_price_cents=1599,
        dns_records=[],
        created_at=1.0,
    )


def test_attach_connect_release_keeps_the_id() -> None:
    domain = new()
    assert (domain.status, domain.category) == ("available", "inventory")
    domain.attach("ord_1", "suite_b", "suite_b", "wrk_1", "cus_1", "https://x.example/", 2.0)
    assert (domain.status, domain.category, domain.order_id) == (
        "in_progress",
        "connected",
        "ord_1",
    )
    with pytest.raises(DomainError):
        domain.attach("ord_2", "suite_a", "suite_a", None, None, None, 2.5)
    domain.require_action("nameservers_not_pointed", 3.0)
    domain.mark_connected(4.0)
    assert domain.status == "active"
    domain.release(5.0)
    assert (domain.status, domain.category, domain.order_id, domain.suite) == (
        "available",
        "inventory",
        None,
        None,
    )
    names = [type(e).__qualname__ for e in domain.collect_events()]
    assert names == [
        "Domain.Registered",
        "Domain.Attached",
        "Domain.ActionRequired",
        "Domain.Connected",
        "Domain.Released",
    ]


def test_failed_domain_cannot_wait_for_input_and_connect_needs_setup() -> None:
    domain = new()
    with pytest.raises(DomainError):
        domain.mark_connected(2.0)
    domain.mark_failed("registry_error", 2.0)
    with pytest.raises(DomainError):
        domain.require_action("x", 3.0)
