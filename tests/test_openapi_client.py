"""A partner's generated SDK: `openapi-python-client` builds a Python client from the served
OpenAPI document without a single warning (one "Endpoint will not be generated" is an
operation a partner cannot call), and that client drives the main flow against the running
service: the key, a workspace, a bundle, orders, a list in pages, the events, and an error
read as the documented envelope."""

from __future__ import annotations

import hashlib
import importlib
import subprocess
import sys
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from conftest import PATIENCE, RunningService

GENERATOR = Path(sys.executable).parent / "openapi-python-client"
# No formatting hooks: the client is imported, not read, and ruff need not be on PATH.
CONFIG = "post_hooks: []\n"
# A generated package per document, shared by the tests of one worker (generation takes
# seconds on a loaded machine; both stores serve the same document).
_GENERATED: dict[str, ModuleType] = {}


def generate(document: bytes, workdir: Path) -> ModuleType:
    digest = hashlib.sha256(document).hexdigest()[:16]
    if digest in _GENERATED:
        return _GENERATED[digest]
    package = f"partner_client_{digest}"
    (workdir / "openapi.json").write_bytes(document)
    (workdir / "config.yaml").write_text(CONFIG)
    run = subprocess.run(
        [str(GENERATOR), "generate", "--path", "openapi.json", "--meta", "none",
         "--output-path", package, "--config", "config.yaml"],
        cwd=workdir, capture_output=True, text=True, timeout=600,
    )
    said = run.stdout + run.stderr
    assert run.returncode == 0, said
    # The generator exits 0 while leaving operations or models out: any warning fails.
    assert "warning" not in said.lower(), said
    sys.path.insert(0, str(workdir))
    _GENERATED[digest] = importlib.import_module(package)
    return _GENERATED[digest]


@pytest.fixture
def sdk(service: RunningService, tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    document = httpx.get(f"{service.api}/schema/openapi.json", timeout=PATIENCE).content
    return generate(document, tmp_path_factory.mktemp("generated"))


def part(sdk: ModuleType, name: str) -> Any:
    """A module of the generated package: `api.orders.create_order`, `models`."""
    return importlib.import_module(f"{sdk.__name__}.{name}")


def test_generated_client_drives_the_main_flow(service: RunningService, sdk: ModuleType) -> None:
    models = part(sdk, "models")
    client = sdk.AuthenticatedClient(
        base_url=service.base_url,
        token=service.new_key(service.new_org("Generated"), "test", "full"),
        timeout=httpx.Timeout(PATIENCE),
    )
    with client:
        me = part(sdk, "api.account.get_me").sync(client=client)
        assert isinstance(me, models.MeResponse), me
        assert me.data.api_key.environment == models.ApiKeyInfoEnvironment.TEST
        assert me.data.api_key.permission_preset == models.ApiKeyInfoPermissionPreset.FULL

        workspace = part(sdk, "api.workspaces.create_workspace").sync(
            client=client,
            idempotency_key=str(uuid.uuid4()),
            body=models.CreateWorkspaceRequest.from_dict(
                {"name": "Acme outbound", "provider": "u", "credentials": {"api_key": "key_good"}}
            ),
        )
        assert isinstance(workspace, models.WorkspaceResponse), workspace
        workspace_id = workspace.data.workspace_id

        bundle = part(sdk, "api.bundles.create_bundle").sync(
            client=client,
            body=models.CreateBundleRequest(
                name="Starter", monthly_sending_volume=1000, send_on_weekends=False
            ),
        )
        assert isinstance(bundle, models.BundleResponse), bundle

        placed = [place_order(sdk, client, workspace_id, bundle_id=bundle.data.id)]
        placed += [place_order(sdk, client, workspace_id) for _ in range(2)]
        assert placed[0].bundle_id == bundle.data.id
        assert all(order.type_ == models.OrderOutType.ORDER for order in placed)

        assert sorted(list_all_orders(sdk, client)) == sorted(order.id for order in placed)
        service.wait_projections()
        events = part(sdk, "api.events.list_events").sync(client=client, per_page=100)
        assert isinstance(events, models.EventPage), events
        types = {event.type_ for event in events.data}
        assert models.EventOutType.ORDER_IN_PROGRESS in types, types

        missing = part(sdk, "api.orders.get_order").sync(client=client, order_id="ord_missing")
        assert isinstance(missing, models.ErrorEnvelope), missing
        assert missing.error.code == models.ErrorEnvelopeErrorCode.NOT_FOUND
        assert missing.error.request_id


def place_order(sdk: ModuleType, client: Any, workspace_id: str, **extra: Any) -> Any:
    models = part(sdk, "models")
    body: dict[str, Any] = {"destination": {"workspace_id": workspace_id}, **extra}
    if "bundle_id" not in extra:
        body["suite_a"] = {"domains": 1, "inboxes_per_domain": 2}
    answer = part(sdk, "api.orders.create_order").sync_detailed(
        client=client,
        idempotency_key=str(uuid.uuid4()),
        body=models.CreateOrderRequest.from_dict(body),
    )
    assert answer.status_code == 201, answer.content
    assert isinstance(answer.parsed, models.OrderResponse), answer.parsed
    return answer.parsed.data


def list_all_orders(sdk: ModuleType, client: Any) -> list[str]:
    """Every order id, two a page, following `links.next` until it is null."""
    list_orders = part(sdk, "api.orders.list_orders")
    ids: list[str] = []
    token: Any = part(sdk, "types").UNSET
    for _page in range(10):
        page = list_orders.sync(client=client, per_page=2, page_token=token)
        assert isinstance(page, part(sdk, "models").OrderList), page
        assert len(page.data) <= 2 and page.meta.per_page == 2
        ids += [order.id for order in page.data]
        if page.links.next_ is None:
            return ids
        (token,) = parse_qs(urlsplit(page.links.next_).query)["page_token"]
    raise AssertionError(f"no last page after 10: {ids}")
