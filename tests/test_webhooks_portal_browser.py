"""The portal in a real headless Chromium (Debian's `chromium`, driven by Playwright), against the
running service, the real NATS and a real HTTP receiver on loopback."""

from __future__ import annotations

import contextlib
import importlib.util
import shutil
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from conftest import PATIENCE, RunningService, ServiceFactory, delete_nats_stream, require
from webhook_receiver import Receiver, wait_until

from webhooks.signing import verify_signature

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ROLES = ["gateway", "projections", "publisher", "dispatcher"]


def launch_chromium(playwright: Any) -> Any:
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True)


@pytest.fixture
def browser_page() -> Iterator[Any]:
    """A fresh headless Chromium page; skipped without Chromium or Playwright, failed in CI."""
    require("Playwright", importlib.util.find_spec("playwright") is not None)
    require("Chromium", shutil.which(CHROMIUM) is not None)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            page = browser.new_page()
            page.set_default_timeout(PATIENCE * 1000)
            yield page
        finally:
            browser.close()


@pytest.fixture
def webhooks(service_factory: ServiceFactory) -> Iterator[RunningService]:
    running = service_factory(
        roles=ROLES, allow_http_webhooks=True, webhook_retry_schedule=(0.2, 0.2, 0.2, 0.2)
    )
    yield running
    settings = running.container.settings
    assert settings.nats_url
    with contextlib.suppress(Exception):
        delete_nats_stream(settings)


def refresh_until(page: Any, check: Callable[[], bool]) -> None:
    """The page is server-rendered: follow its Refresh link until the log shows what we wait for."""

    def refreshed() -> bool:
        page.click("#refresh")
        page.wait_for_load_state()
        return check()

    wait_until(refreshed, timeout=PATIENCE, interval=0.1)


def test_portal_in_chromium(webhooks: RunningService, browser_page: Any) -> None:
    # The first attempt of the test event fails, so the log shows a retried delivery.
    receiver = Receiver(respond=lambda got: 500 if len(got) == 1 else 200).start()
    try:
        org = webhooks.new_org()
        key = webhooks.new_key(org, "live", "full")
        page = browser_page
        page.goto(f"{webhooks.base_url}/portal")
        page.fill("#api_key", webhooks.new_key(org, "test", "read"))
        page.click("#sign-in")
        assert "full preset" in page.inner_text("#error")
        page.fill("#api_key", key)
        page.click("#sign-in")
        assert page.inner_text("#org") == org

        page.fill("#url", receiver.url)
        page.click("#save-url")
        secret = page.inner_text("#secret")
        assert secret.startswith("whsec_") and page.input_value("#url") == receiver.url
        assert page.url.endswith("/portal")  # so a reload does not post the form again
        page.reload()
        assert page.locator("#secret").count() == 0  # shown once
        page.click("#rotate")
        rotated = page.inner_text("#secret")
        assert rotated.startswith("whsec_") and rotated != secret

        page.click("#send-test")
        row = page.locator("tr.event")
        assert row.count() == 1
        event_id = row.get_attribute("data-id")
        assert event_id and event_id.startswith("evt_")
        attempts = row.locator("li.attempt")
        refresh_until(page, lambda: row.locator(".status").inner_text() == "delivered")
        assert attempts.count() == 2
        assert "500" in attempts.nth(0).inner_text() and "200" in attempts.nth(1).inner_text()
        received = receiver.of_event(event_id)
        assert len(received) == 2
        assert all(verify_signature(rotated, r.headers, r.body, time.time()) for r in received)

        row.locator("button.redeliver").click()
        refresh_until(
            page,
            lambda: attempts.count() == 3 and row.locator(".status").inner_text() == "delivered",
        )
        assert "200" in attempts.nth(2).inner_text()
        again = receiver.of_event(event_id)
        assert len(again) == 3 and again[-1].event["id"] == event_id
        assert verify_signature(rotated, again[-1].headers, again[-1].body, time.time())

        # Recovery after an outage: the receiver goes down, two events fail, it comes back,
        # and "Redeliver since" sends exactly those again, one attempt each, same ids.
        receiver.respond = lambda _: 500
        since = page.locator("tr.event td").nth(2).inner_text()  # the newest event's created_at
        page.click("#send-test")
        page.click("#send-test")
        down = [row.get_attribute("data-id") for row in page.locator("tr.event").all()[:2]]
        assert event_id not in down

        def failed() -> bool:
            statuses = [page.locator(f'tr.event[data-id="{e}"] .status').inner_text() for e in down]
            return statuses == ["failed", "failed"]

        refresh_until(page, failed)
        receiver.respond = lambda _: 200
        page.fill("#since", since)
        page.select_option("#since-status", "failed")
        page.click("#redeliver-since")
        assert page.inner_text("#redelivered") == "2 events queued for redelivery."
        assert page.url.endswith("/portal")

        def delivered() -> bool:
            rows = [page.locator(f'tr.event[data-id="{e}"]') for e in down]
            return all(r.locator(".status").inner_text() == "delivered" for r in rows)

        refresh_until(page, delivered)
        for resent in down:
            assert resent is not None and len(receiver.of_event(resent)) == 6
            assert receiver.of_event(resent)[-1].event["id"] == resent
        assert len(receiver.of_event(event_id)) == 3  # delivered before: not sent again
        page.fill("#since", "last tuesday")
        page.click("#redeliver-since")
        assert "ISO 8601" in page.inner_text("#error")

        page.click("text=Sign out")
        page.locator("#api_key").wait_for(timeout=PATIENCE * 1000)  # the sign-out navigation lands
        assert page.locator("#api_key").count() == 1
    finally:
        receiver.stop()
