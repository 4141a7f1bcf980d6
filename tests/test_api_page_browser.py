"""The interactive API page in a real headless Chromium with every request beyond the service
refused, as on a machine without internet: Swagger UI's scripts and styles come from the
service, and the page lists the operations of the document."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import httpx
from conftest import PATIENCE, RunningService
from test_webhooks_portal_browser import browser_page  # noqa: F401 - the fixture

LOCAL_HOSTS = {"127.0.0.1", "localhost"}


def test_api_page_renders_offline(service: RunningService, browser_page: Any) -> None:  # noqa: F811
    page = browser_page
    refused: list[str] = []

    def only_local(route: Any) -> None:
        url = route.request.url
        if urlsplit(url).hostname in LOCAL_HOSTS or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            refused.append(url)
            route.abort("internetdisconnected")

    page.route("**/*", only_local)
    answer = page.goto(f"{service.api}/schema")
    assert answer is not None and answer.status == 200
    # Swagger UI draws one block per operation once its script has run.
    page.locator(".opblock").first.wait_for(timeout=PATIENCE * 1000)
    document = httpx.get(f"{service.api}/schema/openapi.json", timeout=PATIENCE).json()
    # Swagger UI's id of an operation's block: `operations-<first tag>-<operationId>`.
    expected = {
        f"operations-{operation['tags'][0]}-{operation['operationId']}".replace(" ", "_")
        for item in document["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict) and "operationId" in operation
    }
    shown = set(page.eval_on_selector_all(".opblock", "blocks => blocks.map(b => b.id)"))
    assert expected <= shown, sorted(expected - shown)
    listed = page.inner_text(".swagger-ui")
    for path in ("/partner/v1/orders", "/partner/v1/me", "/partner/v1/workspaces"):
        assert path in listed
    assert page.locator(".info .title").inner_text().startswith("Partner Provisioning API")
    assert refused == []
