"""The portal's sandbox clock in a real headless Chromium: shown on a sandbox key's
dashboard, moved by its form (CSRF-checked like the portal's other forms)."""

from __future__ import annotations

from typing import Any

import httpx
from conftest import ServiceFactory
from sandbox_clock_support import completed_order
from test_webhooks_portal_browser import browser_page  # noqa: F401 - the fixture

from infra.clock import ManualClock


def _sign_in(page: Any, base_url: str, key: str) -> None:
    page.goto(f"{base_url}/portal")
    page.fill("#api_key", key)
    page.click("#sign-in")


def test_portal_shows_and_advances_the_sandbox_clock(
    service_factory: ServiceFactory, browser_page: Any  # noqa: F811
) -> None:
    service = service_factory(clock=ManualClock(), cancel_grace_seconds=300)
    org = service.new_org()
    key = service.new_key(org)
    with service.client(key) as sandbox:
        order = completed_order(sandbox)
        assert sandbox.post(f"/orders/{order['id']}/cancel").status_code == 200
    page = browser_page
    _sign_in(page, service.base_url, key)
    assert page.inner_text("#clock-advanced") == "0"
    before = page.inner_text("#clock-now")
    page.fill("#advance-amount", "5")
    page.select_option("#advance-unit", "minutes")
    page.click("#advance")
    assert page.inner_text("#clock-advanced") == "300"
    assert page.inner_text("#clock-now") > before
    assert "1 grace windows" in page.inner_text("#came-due")
    assert page.url.endswith("/portal")
    page.fill("#advance-amount", "400")
    page.select_option("#advance-unit", "days")
    page.click("#advance")
    assert "366 days" in page.inner_text("#error")
    assert page.inner_text("#clock-advanced") == "300"
    with service.client(key) as sandbox:
        assert sandbox.get(f"/orders/{order['id']}").json()["data"]["status"] == "cancelled"

    # Without the form's CSRF token (the session cookie alone) nothing moves.
    cookies = {c["name"]: c["value"] for c in page.context.cookies()}
    with httpx.Client(base_url=service.base_url, cookies=cookies) as forged:
        answer = forged.post("/portal/clock/advance", data={"amount": "1", "unit": "days"})
        assert answer.status_code == 303
    with service.client(key) as sandbox:
        assert sandbox.get("/sandbox/clock").json()["data"]["advanced_seconds"] == 300

    # A live key's dashboard has no clock.
    page.click("text=Sign out")
    page.locator("#api_key").wait_for(timeout=10_000)
    _sign_in(page, service.base_url, service.new_key(org, "live"))
    assert page.locator("#org").inner_text() == org
    assert page.locator("#clock-now").count() == 0
