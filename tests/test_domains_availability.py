"""Availability, the TLD catalog and name generation through HTTP (spec 2.5, 4.1, 4.2, 8)."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from conftest import RunningService
from test_orders_sandbox import error_of, settled


def check(client: httpx.Client, *names: str) -> list[dict[str, Any]]:
    response = client.post("/domains/availability", json={"domains": list(names)})
    assert response.status_code == 200, response.text
    rows: list[dict[str, Any]] = response.json()["data"]["domains"]
    return rows


def place_order(client: httpx.Client, a: int, b: int) -> dict[str, str]:
    """A sandbox order whose domains the service picks; returns {name: suite}."""
    created = client.post(
        "/workspaces",
        json={"name": "W", "provider": "u", "credentials": {"api_key": "key_good"}},
        headers={"Idempotency-Key": str(uuid.uuid4())},
    )
    assert created.status_code == 201, created.text
    body: dict[str, Any] = {"destination": {"workspace_id": created.json()["data"]["workspace_id"]}}
    if a:
        body["suite_a"] = {"domains": a, "inboxes_per_domain": 1}
    if b:
        body["suite_b"] = {"domains": b, "inboxes_per_domain": 1}
    response = client.post("/orders", json=body, headers={"Idempotency-Key": str(uuid.uuid4())})
    return {d["domain"]: d["suite"] for d in settled(client, response)["domains"]}


def test_rows_carry_every_field_and_simulated_outcomes(service: RunningService) -> None:
    with service.partner(preset="limited") as client:
        rows = check(
            client, "Fresh-Name.com", "mytaken.io", "premiumx.com", "bad_name.com", "ok.zzz",
            "mail.fresh-name.com",
        )
    fresh, taken, premium, bad, unknown_tld, subdomain = rows
    assert fresh == {
        "domain": "fresh-name.com",
        "available": True,
        "price_cents": 1299,
        "renewal_price_cents": 1599,
        "currency": "usd",
        "usable_for": ["suite_a", "suite_b"],
        "owned": False,
    }
    assert taken["available"] is False and taken["reason"] == "registered"
    assert taken["price_cents"] == 3999 and taken["usable_for"] == []
    assert premium["available"] is False and premium["reason"] == "premium"
    # A registry's premium price, not the TLD's standard one (decisions 5 simulator).
    assert (premium["price_cents"], premium["renewal_price_cents"]) == (1299 * 50, 1599 * 50)
    assert bad["reason"] == "invalid" and unknown_tld["reason"] == "invalid"
    # A name under a registered name is not one a registry sells.
    assert subdomain["available"] is False and subdomain["reason"] == "invalid"


def test_names_are_compared_as_registries_know_them(service: RunningService) -> None:
    """One trailing dot is the DNS root; an internationalized name is its `xn--` form."""
    with service.partner(preset="limited") as client:
        unicode, ascii_form, rooted, two_dots = check(
            client, "Bücher.com", "xn--bcher-kva.com", "fresh-name.com.", "fresh-name.com.."
        )
    assert unicode == ascii_form and unicode["domain"] == "xn--bcher-kva.com"
    assert unicode["available"] is True
    assert rooted["domain"] == "fresh-name.com" and rooted["available"] is True
    assert two_dots["available"] is False and two_dots["reason"] == "invalid"


def test_limits_and_permissions(service: RunningService) -> None:
    with service.partner() as client:
        assert len(check(client, *[f"n{i}.com" for i in range(50)])) == 50
        too_many = client.post("/domains/availability", json={"domains": ["a.com"] * 51})
        assert too_many.status_code == 400 and too_many.json()["error"]["field"] == "domains"
        empty = client.post("/domains/availability", json={"domains": []})
        assert empty.status_code == 400
        unknown = client.post("/domains/availability", json={"domains": ["a.com"], "x": 1})
        assert unknown.status_code == 400 and unknown.json()["error"]["field"] == "x"
    with service.partner(preset="read") as client:
        denied = client.post("/domains/availability", json={"domains": ["a.com"]})
        assert denied.status_code == 403 and denied.json()["error"]["code"] == "forbidden"


def test_usable_for_follows_the_suites_using_the_name(service: RunningService) -> None:
    from services.domains.use_cases import usable_for

    with service.partner() as client:
        (only_a,) = place_order(client, a=1, b=0)
        (only_b,) = place_order(client, a=0, b=1)
        rows = {r["domain"]: r for r in check(client, only_a, only_b, "nobody.com")}
        # Names this organization owns stay orderable, with the suites the table allows.
        assert rows[only_a]["available"] is True and rows[only_a]["owned"] is True
        assert rows[only_a]["usable_for"] == ["suite_a", "suite_b"]
        assert rows[only_b]["usable_for"] == ["suite_a"]
        assert rows["nobody.com"]["usable_for"] == ["suite_a", "suite_b"]
    # Another organization cannot order names held here.
    with service.partner() as other:
        rows = {r["domain"]: r for r in check(other, only_a, only_b)}
        assert rows[only_a]["reason"] == "registered" and rows[only_a]["usable_for"] == []
    assert usable_for(set()) == ["suite_a", "suite_b"]
    assert usable_for({"suite_a"}) == ["suite_a", "suite_b"]
    assert usable_for({"suite_b"}) == ["suite_a"]
    assert usable_for({"suite_a", "suite_b"}) == ["suite_a"]


def test_tld_catalog_has_no_prices(service: RunningService) -> None:
    with service.partner(preset="read") as client:
        response = client.get("/domains/tlds")
    assert response.status_code == 200
    tlds = response.json()["data"]
    assert {"tld": "com", "name": ".com"} in tlds
    assert all(set(t) == {"tld", "name"} for t in tlds)


def generate(client: httpx.Client, **body: Any) -> httpx.Response:
    return client.post("/domains/generate", json=body)


def test_generate_prefixes_before_suffixes_after_com_only(service: RunningService) -> None:
    with service.partner(preset="limited") as client:
        response = generate(client, keywords=["acme"], prefixes=["get"], suffixes=["hq"])
        assert response.status_code == 200, response.text
        data = response.json()["data"]
        assert data["partial"] is False
        assert data["domains"] == [
            {"tld": "com", "domains": ["getacme.com", "acmehq.com"]}
        ]  # built from the affixes only (spec 4.2): not the bare keyword
        # Taken and premium names are never offered.
        data = generate(
            client, keywords=["taken", "premiumx", "ok"], tlds=["io", "net"], prefixes=[]
        ).json()
        assert data["data"]["domains"] == [
            {"tld": "io", "domains": ["ok.io"]},
            {"tld": "net", "domains": ["ok.net"]},
        ]
        # A limit spreads over every keyword sent, not the first one's names alone.
        spread = generate(client, keywords=["alpha", "beta", "gamma"], limit=6).json()["data"]
        (names,) = [group["domains"] for group in spread["domains"]]
        assert len(names) == 6
        assert all(any(k in n for n in names) for k in ("alpha", "beta", "gamma")), names


def test_generate_from_keywords_alone_uses_the_services_affixes(service: RunningService) -> None:
    with service.partner(preset="limited") as client:
        data = generate(client, keywords=["acme"]).json()["data"]
        (group,) = data["domains"]
        names = group["domains"]
        assert group["tld"] == "com" and data["returned"] == len(names) == 75
        assert "acme.com" not in names and "getacme.com" in names and "acmehq.com" in names
        assert all(n.endswith(".com") and "acme" in n for n in names)
        assert len(set(names)) == len(names) and data["partial"] is False


def test_generate_limits(service: RunningService) -> None:
    prefixes = [f"p{i}" for i in range(40)]
    suffixes = [f"s{i}" for i in range(40)]
    with service.partner(preset="limited") as client:
        default = generate(client, keywords=["k1", "k2"], prefixes=prefixes, suffixes=suffixes)
        # The fixed time budget may cut a loaded machine short; then the answer says partial.
        data = default.json()["data"]
        assert data["returned"] == 75 or (data["partial"] and 0 < data["returned"] < 75)
        assert data["partial"] is (data["returned"] < 75)
        big = generate(
            client,
            keywords=[f"k{i}" for i in range(10)],
            prefixes=prefixes,
            suffixes=suffixes,
            tlds=["com", "net"],
            limit=150,
        ).json()["data"]
        assert big["returned"] == 150 and big["candidates_examined"] <= 300
        # Every candidate taken: 300 examined, none found, cut short.
        cut = generate(
            client,
            keywords=[f"taken{i}" for i in range(10)],
            prefixes=prefixes,
            suffixes=suffixes,
            limit=150,
        ).json()["data"]
        assert cut["candidates_examined"] == 300 and cut["returned"] == 0
        assert cut["partial"] is True
        for bad in ({"limit": 151}, {"limit": 0}, {"keywords": []}, {"tlds": ["zzz"]}):
            response = generate(client, **{"keywords": ["a"], **bad})
            assert response.status_code == 400, bad
        assert generate(client, keywords=[f"k{i}" for i in range(11)]).status_code == 400
    with service.partner(preset="read") as client:
        assert generate(client, keywords=["a"]).status_code == 403


def test_sub_domains_are_imported_and_ordered_but_never_bought(service: RunningService) -> None:
    from test_orders_sandbox import counts, new_workspace, placed
    from test_wallet_purchase import buy, credit

    with service.partner() as client:
        imported = client.post("/domains/import", json={"domains": ["mail.sub-client.com"]})
        assert imported.status_code == 201, imported.text
        service.wait_projections()
        (row,) = check(client, "mail.sub-client.com")
        assert row["available"] is True and row["owned"] is True
        named = [{"domain": "mail.sub-client.com", "suite": "suite_a"}]
        assert placed(client, counts(new_workspace(client), a=1, domains=named))["status"] == (
            "completed"
        )
    org = service.new_org()
    credit(service, org, 5000)
    with service.client(service.new_key(org, "live")) as live:
        refused = buy(live, "mail.sub-buy.com")
        assert refused.status_code == 400, refused.text
        assert refused.json()["error"]["field"] == "domains[0].domain"


def test_generate_refuses_parts_that_can_only_make_invalid_names(service: RunningService) -> None:
    """A name never begins or ends with a hyphen and its label has 63 characters at most: a
    part that could only break that rule is 400 on it, not a quietly short answer."""
    long_keyword, long_affix = "k" * 40, "a" * 30
    with service.partner(preset="limited") as client:
        for body, field in (
            ({"keywords": ["-acme"]}, "keywords[0]"),
            ({"keywords": ["ok", "acme-"], "suffixes": ["hq"]}, "keywords[1]"),
            ({"keywords": ["acme"], "prefixes": ["-x"]}, "prefixes[0]"),
            ({"keywords": ["acme"], "suffixes": ["x-"]}, "suffixes[0]"),
            ({"keywords": [long_keyword], "prefixes": ["get", long_affix]}, "prefixes[1]"),
            ({"keywords": ["acme", long_keyword], "suffixes": [long_affix]}, "suffixes[0]"),
        ):
            error = error_of(generate(client, **body), 400, "invalid_request")
            assert error["field"] == field, (body, error)
        hyphens = generate(client, keywords=["acme"], prefixes=["get-"], suffixes=["-hq"])
        names = {n for group in hyphens.json()["data"]["domains"] for n in group["domains"]}
        assert names == {"get-acme.com", "acme-hq.com"}
