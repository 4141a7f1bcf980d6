"""Domain names as registries see them: IDNA 2008 with the UTS 46 mapping (non-transitional)."""

from __future__ import annotations

import pytest
from conftest import RunningService
from test_domains_availability import check
from test_orders_sandbox import counts, error_of, new_workspace, place
from test_wallet_purchase import buy, credit

from adapters import registrar

REFUSED = ["😀.com", "xn--zz.com", "\u0301a.com", "ab--c.com", "a_b.com", "a..com"]


@pytest.mark.parametrize(
    ("sent", "stored"),
    [
        ("ß.com", "xn--zca.com"),
        ("Bücher.COM", "xn--bcher-kva.com"),
        ("xn--bcher-kva.com.", "xn--bcher-kva.com"),
        ("Ａ.com", "a.com"),
        ("plain.io", "plain.io"),
    ],
)
def test_valid_names_take_their_registry_form(sent: str, stored: str) -> None:
    assert registrar.normalize(sent) == stored
    assert registrar.is_valid_name(stored)


@pytest.mark.parametrize("sent", REFUSED)
def test_names_a_registry_refuses_are_invalid(sent: str) -> None:
    assert registrar.registry_refusal(registrar.normalize(sent)) == registrar.INVALID


def test_availability_rows_give_the_reason(service: RunningService) -> None:
    with service.partner() as client:
        rows = check(client, "ß.com", *REFUSED)
    assert rows[0]["domain"] == "xn--zca.com" and rows[0]["available"] is True
    for sent, row in zip(REFUSED, rows[1:], strict=True):
        assert row == {**row, "domain": sent, "available": False, "reason": "invalid"}


def test_purchases_and_orders_refuse_invalid_names(service: RunningService) -> None:
    org = service.new_org()
    credit(service, org, 5000)
    with service.client(service.new_key(org, "live")) as live:
        for sent in REFUSED[:3]:
            error = error_of(buy(live, "fine-name.com", sent), 400, "invalid_request")
            assert error["field"] == "domains[1].domain" and sent in error["message"]
        assert live.get("/orders").json()["data"] == []
        assert live.get("/wallet").json()["data"]["balance_cents"] == 5000
        bought = buy(live, "ß.com")
        assert bought.status_code == 201, bought.text
        assert [d["domain"] for d in bought.json()["data"]["domains"]] == ["xn--zca.com"]
    with service.partner() as client:
        workspace = new_workspace(client)
        for sent in REFUSED[:3]:
            body = counts(workspace, a=1, domains=[{"domain": sent, "suite": "suite_a"}])
            error = error_of(place(client, body), 400, "invalid_request")
            assert error["field"] == "domains[0].domain"
        assert client.get("/orders").json()["data"] == []


def test_imports_and_pool_calls_refuse_invalid_names(service: RunningService) -> None:
    with service.partner() as client:
        for sent in REFUSED[:3]:
            for path in ("/domains/import", "/pool/add", "/pool/remove"):
                answer = client.post(path, json={"domains": ["fine-name.com", sent]})
                error = error_of(answer, 400, "invalid_request")
                assert error["field"] == "domains[1]", (path, error)
        imported = client.post("/domains/import", json={"domains": ["Bücher.com"]})
        assert imported.status_code == 201, imported.text
        assert imported.json()["data"]["domains"][0]["domain"] == "xn--bcher-kva.com"
