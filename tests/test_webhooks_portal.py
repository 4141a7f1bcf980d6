"""The portal over real HTTP, as a browser uses it: form posts, the session cookie, CSRF."""

from __future__ import annotations

import re

import httpx
from conftest import RunningService


def browser(service: RunningService) -> httpx.Client:
    return httpx.Client(base_url=service.base_url, follow_redirects=True, timeout=10.0)


def csrf_of(page: str) -> str:
    match = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
    assert match, page
    return match.group(1)


def test_portal_sign_in_endpoint_secret_test_event_and_redeliver(service: RunningService) -> None:
    org = service.new_org()
    key = service.new_key(org, "live", "full")
    with browser(service) as sandbox:  # one endpoint serves both: a sandbox key only reads it
        page = sandbox.post("/portal/login", data={"api_key": service.new_key(org, "test")})
        for path, form in (("/portal/endpoint", {"url": "https://8.8.8.8/x"}), ("/portal/rotate", {})):
            refused = sandbox.post(path, data={"csrf": csrf_of(page.text), **form})
            assert 'id="error"' in refused.text and 'id="secret"' not in refused.text
    with browser(service) as web:
        assert 'id="api_key"' in web.get("/portal").text
        dashboard = web.post("/portal/login", data={"api_key": service.new_key(org, "test")})
        # A sandbox key cannot change the endpoint: no form offers to.
        assert 'id="save-url"' not in dashboard.text and 'id="rotate"' not in dashboard.text
        assert 'id="send-test"' in dashboard.text
        bogus = web.get("/portal", params={"status": "bogus"})
        assert bogus.status_code == 200 and "bogus" in bogus.text and 'id="error"' in bogus.text
        web.post("/portal/logout", data={"csrf": csrf_of(dashboard.text)})
        refused = web.post("/portal/login", data={"api_key": service.new_key(org, "test", "read")})
        assert refused.status_code == 403 and 'id="error"' in refused.text  # valid, no right
        unknown = web.post("/portal/login", data={"api_key": "pk_test_" + "x" * 32})
        assert unknown.status_code == 401 and 'id="error"' in unknown.text
        page = web.post("/portal/login", data={"api_key": key})
        assert page.status_code == 200 and org in page.text
        csrf = csrf_of(page.text)

        bad = web.post("/portal/endpoint", data={"csrf": csrf, "url": "https://10.0.0.1/"})
        assert 'id="error"' in bad.text and 'id="secret"' not in bad.text
        saved = web.post("/portal/endpoint", data={"csrf": csrf, "url": "https://8.8.8.8/hook"})
        secret = re.search(r'id="secret">(whsec_[^<]+)<', saved.text)
        assert secret is not None
        assert secret.group(1) not in web.get("/portal").text  # shown once
        rotated = web.post("/portal/rotate", data={"csrf": csrf})
        new = re.search(r'id="secret">(whsec_[^<]+)<', rotated.text)
        assert new is not None and new.group(1) != secret.group(1)

        listed = web.post("/portal/test", data={"csrf": csrf}).text
        (event_id,) = re.findall(r'data-id="(evt_[0-9a-f]+)"', listed)
        api = service.client(key)
        assert api.get(f"/events/{event_id}").json()["data"]["type"] == "webhook.test"
        again = web.post(f"/portal/events/{event_id}/redeliver", data={"csrf": csrf})
        assert event_id in again.text and "pending" in again.text

        # Without the CSRF token a post does nothing; a forged cookie is no session.
        web.post("/portal/test", data={"csrf": "0" * 64})
        assert len(api.get("/events").json()["data"]) == 1
        web.cookies.set("portal_session", "key_x.9999999999.00", path="/portal")
        assert 'id="api_key"' in web.get("/portal").text


def test_revoking_the_key_ends_the_portal_session(service: RunningService) -> None:
    org = service.new_org()
    issued = service.container.accounts.create_key(org, "test", "full")
    with browser(service) as web:
        assert org in web.post("/portal/login", data={"api_key": issued.secret}).text
        service.container.accounts.revoke_key(issued.id)
        assert 'id="api_key"' in web.get("/portal").text


def test_every_event_is_reachable_by_page_and_status(service: RunningService) -> None:
    """Spec 6: the portal marks failed events and lists their attempts, so none may fall off
    the page: 50 a page, `Older events` to the rest, and a filter by delivery status."""
    org = service.new_org()
    key = service.new_key(org, "test", "full")
    with browser(service) as web:
        csrf = csrf_of(web.post("/portal/login", data={"api_key": key}).text)
        for _ in range(53):
            web.post("/portal/test", data={"csrf": csrf})
        service.wait_projections()
        first = web.get("/portal").text
        older = re.search(r'href="([^"]+)" id="older"', first)
        assert older is not None and len(re.findall(r'data-id="evt_', first)) == 50
        rest = web.get(older.group(1).replace("&amp;", "&")).text
        assert len(re.findall(r'data-id="evt_', rest)) == 3 and 'id="older"' not in rest
        seen = set(re.findall(r'data-id="(evt_[0-9a-f]+)"', first + rest))
        assert len(seen) == 53
        pending = web.get("/portal?status=pending").text
        assert len(re.findall(r'data-id="evt_', pending)) == 50 and 'id="older"' in pending
        assert "<strong>pending</strong>" in pending
        assert not re.findall(r'data-id="evt_', web.get("/portal?status=failed").text)
        for odd in ("²", "9" * 30, "-1", "x"):  # not a position: the first page
            shown = web.get("/portal", params={"before": odd})
            assert shown.status_code == 200 and 'id="older"' in shown.text, odd


def test_redeliver_since_needs_the_form_token_and_iso_8601(service: RunningService) -> None:
    """No dispatcher runs here: an event stays unsent until a redelivery queues its attempt."""
    key = service.new_key(service.new_org(), "test", "full")
    api = service.client(key)
    with browser(service) as web:
        csrf = csrf_of(web.post("/portal/login", data={"api_key": key}).text)
        web.post("/portal/endpoint", data={"csrf": csrf, "url": "https://8.8.8.8/hook"})
        web.post("/portal/test", data={"csrf": csrf})
        (event,) = api.get("/events").json()["data"]
        assert event["next_attempt_at"] is None
        since = "2020-01-01T00:00:00Z"
        forged = web.post("/portal/redeliver", data={"csrf": "0" * 64, "since": since})
        assert 'id="redelivered"' not in forged.text
        assert api.get(f"/events/{event['id']}").json()["data"]["next_attempt_at"] is None
        naive = web.post("/portal/redeliver", data={"csrf": csrf, "since": "2020-01-01T00:00"})
        assert 'id="error"' in naive.text and "ISO 8601" in naive.text
        # `since` against the envelope's `created_at`, to the millisecond it shows, as the API
        # compares it: a finer moment inside that millisecond is after it.
        finer = event["created_at"].replace("Z", "1Z")
        later = web.post("/portal/redeliver", data={"csrf": csrf, "since": finer, "status": ""})
        assert "0 events queued for redelivery." in later.text, later.text
        assert api.post("/events/redeliver", json={"since": finer}).json()["data"] == {
            "redelivered": 0
        }
        sent = web.post("/portal/redeliver", data={"csrf": csrf, "since": since, "status": ""})
        assert "1 event queued for redelivery." in sent.text, sent.text
        assert api.get(f"/events/{event['id']}").json()["data"]["next_attempt_at"] is not None
