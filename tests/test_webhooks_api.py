"""Endpoint registration and the events API, without NATS: the event log comes from the
notification log, so it lists events even when no webhook URL is set."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import RunningService


def test_registration_refuses_private_and_plain_http_urls(service: RunningService) -> None:
    partner = service.partner("live")
    for url in (
        "http://example.com/hook",
        "https://127.0.0.1/hook",
        "https://10.1.2.3/hook",
        "https://169.254.169.254/latest",
        "https://[::1]/hook",
        # IPv6 forms that carry 127.0.0.1: compatible, NAT64, 6to4; trailing dots.
        "https://[::127.0.0.1]/hook",
        "https://[64:ff9b::7f00:1]/hook",
        "https://[2002:7f00:1::]/hook",
        "https://[64:ff9b:1::a00:1]/hook",
        "https://192.168.1.1./hook",
        "https://127.0.0.1\u3002/hook",
        "https://localhost/hook",
        "ftp://example.com/x",
        "not a url",
        "https://exa mple.com/",
        "https://exa%20mple.com/",
        "https://example..com/",
        "https://8.8.8.8/ho ok",
        "https://8.8.8.8/hook\r\nX-Injected: 1",
        "https://8.8.8.8/\thook",
        "https://8.8.8.8:0/hook",
        "https://8.8.8.8/hook#part",
        "https://8.8.8.8/hook#",
    ):
        answer = partner.put("/webhook_endpoint", json={"url": url})
        assert answer.status_code == 400, url
        assert answer.json()["error"]["code"] == "invalid_request"
        assert answer.json()["error"]["field"] == "url"
    public_nat64 = partner.put("/webhook_endpoint", json={"url": "https://[64:ff9b::808:808]/"})
    assert public_nat64.status_code == 200, public_nat64.text
    unknown = partner.put("/webhook_endpoint", json={"url": "https://8.8.8.8/", "x": 1})
    assert unknown.status_code == 400 and unknown.json()["error"]["field"] == "x"


def test_secret_is_shown_once_and_rotates(service: RunningService) -> None:
    partner = service.partner("live")
    saved = partner.put("/webhook_endpoint", json={"url": "https://8.8.8.8/hook"})
    assert saved.status_code == 200
    secret = saved.json()["data"]["secret"]
    assert secret.startswith("whsec_") and len(secret) >= 38
    shown = partner.get("/webhook_endpoint").json()["data"]
    assert shown == {"url": "https://8.8.8.8/hook", "secret_set": True}
    assert secret not in partner.get("/webhook_endpoint").text
    rotated = partner.post("/webhook_endpoint/rotate_secret").json()["data"]
    assert rotated["secret"].startswith("whsec_") and rotated["secret"] != secret


def test_read_key_cannot_change_the_endpoint(service: RunningService) -> None:
    reader = service.partner("live", preset="read")
    answer = reader.put("/webhook_endpoint", json={"url": "https://8.8.8.8/hook"})
    assert answer.status_code == 403 and answer.json()["error"]["code"] == "forbidden"


def test_a_sandbox_key_cannot_change_the_live_endpoint(service: RunningService) -> None:
    """One endpoint serves both environments: a sandbox key sees it, and neither replaces it
    nor rotates its secret, so live deliveries stay where the live receiver verifies them."""
    sandbox = service.partner()
    live = service.live_twin(sandbox)
    saved = live.put("/webhook_endpoint", json={"url": "https://8.8.8.8/live"})
    assert saved.status_code == 200, saved.text
    for answer in (
        sandbox.put("/webhook_endpoint", json={"url": "https://8.8.8.8/elsewhere"}),
        sandbox.put("/webhook_endpoint", json={"url": "not a url"}),  # refused before the body
        sandbox.post("/webhook_endpoint/rotate_secret"),
    ):
        assert answer.status_code == 403 and answer.json()["error"]["code"] == "forbidden"
    shown = sandbox.get("/webhook_endpoint").json()["data"]
    assert shown == {"url": "https://8.8.8.8/live", "secret_set": True}
    assert sandbox.post("/webhook_endpoint/test").status_code == 202  # a test event still goes


def test_events_are_listed_without_a_webhook_url(service: RunningService) -> None:
    org = service.new_org()
    test_key = service.client(service.new_key(org, "test"))
    live_key = service.client(service.new_key(org, "live"))
    sent = test_key.post("/webhook_endpoint/test")
    assert sent.status_code == 202
    event = sent.json()["data"]
    assert event["id"].startswith("evt_") and event["type"] == "webhook.test"
    assert event["status"] == "pending" and event["attempts"] == []
    assert event["resource_id"] == org

    listed = test_key.get("/events").json()
    assert [e["id"] for e in listed["data"]] == [event["id"]]
    assert listed["meta"]["returned"] == 1 and listed["links"]["next"] is None
    assert test_key.get(f"/events/{event['id']}").json()["data"]["id"] == event["id"]
    # Sandbox and live events never mix, and another tenant's id is not found.
    assert live_key.get("/events").json()["data"] == []
    assert live_key.get(f"/events/{event['id']}").status_code == 404
    other = service.partner()
    assert other.get(f"/events/{event['id']}").status_code == 404
    assert other.post(f"/events/{event['id']}/redeliver").status_code == 404


def test_event_filters_and_paging(service: RunningService) -> None:
    partner = service.partner()
    ids = [partner.post("/webhook_endpoint/test").json()["data"]["id"] for _ in range(3)]
    first = partner.get("/events", params={"per_page": 2}).json()
    assert [e["id"] for e in first["data"]] == ids[::-1][:2]
    second = partner.get(first["links"]["next"].removeprefix("/partner/v1")).json()
    assert [e["id"] for e in second["data"]] == ids[:1]
    assert len(partner.get("/events", params={"type": "webhook.test"}).json()["data"]) == 3
    assert partner.get("/events", params={"type": "order.completed"}).json()["data"] == []
    assert len(partner.get("/events", params={"status": "pending"}).json()["data"]) == 3
    assert partner.get("/events", params={"status": "delivered"}).json()["data"] == []
    bad = partner.get("/events", params={"status": "lost"})
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "status"


def test_cli_sets_the_endpoint(service: RunningService, service_env: dict[str, str]) -> None:
    org = service.new_org()
    env = {**os.environ, **service_env}
    done = subprocess.run(
        [sys.executable, "-m", "cli.main", "webhook", "set", org, "https://8.8.4.4/hook"],
        env=env, capture_output=True, text=True, timeout=60, check=True,
    )
    printed = json.loads(done.stdout)
    assert printed["url"] == "https://8.8.4.4/hook" and printed["secret"].startswith("whsec_")
    partner = service.client(service.new_key(org))
    assert partner.get("/webhook_endpoint").json()["data"]["url"] == "https://8.8.4.4/hook"
    refused = subprocess.run(
        [sys.executable, "-m", "cli.main", "webhook", "set", org, "https://10.0.0.1/"],
        env=env, capture_output=True, text=True, timeout=60,
    )
    assert refused.returncode != 0 and "invalid_request" in refused.stderr


def test_the_event_type_filter_takes_the_catalog_only(service: RunningService) -> None:
    """A typo in `type` is a 400 on `field` type, not an empty list that looks like 'none yet';
    the OpenAPI document lists the types."""
    partner = service.partner()
    typo = partner.get("/events", params={"type": "order.complete"})
    assert typo.status_code == 400 and typo.json()["error"]["field"] == "type"
    assert partner.get("/events", params={"type": "order.completed"}).status_code == 200
    document = partner.get("/schema/openapi.json").json()
    (listed,) = [p for p in document["paths"]["/partner/v1/events"]["get"]["parameters"]
                 if p["name"] == "type"]
    assert "swap.action_required" in str(listed["schema"])


def test_every_type_the_mappers_emit_is_in_the_catalog() -> None:
    """The catalog is written out by hand: every type a mapper names (literally, or as
    `pool.replacement_{status}`) must be in it, and spec 6's 18 are all there."""
    import re
    from pathlib import Path

    from schema.event_types import EVENT_TYPES, SPEC_TYPES

    source = "\n".join(p.read_text() for p in Path("src").rglob("*.py")
                       if p.name != "catalog.py" and "partnerapi" not in p.parts)
    named = set(re.findall(r'"((?:order|domain|domain_import|swap|pool|webhook)\.[a-z_]+)"',
                           source))
    named |= {f"pool.replacement_{status}" for status in ("completed", "failed")}
    assert named - set(EVENT_TYPES) == set()
    assert len(SPEC_TYPES) == len(set(SPEC_TYPES)) == 18
