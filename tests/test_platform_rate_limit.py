"""The rate limiter stays exact under concurrency: 50 clients at once against two gateway
processes sharing one PostgreSQL allowance never get more than the burst plus the refill."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from chaos_support import SCALE
from conftest import _reachable, drop_schema, free_port, make_env, require
from test_platform_processes import CLI, wait_listening

from infra.settings import Settings
from runtime.container import Container

pytestmark = pytest.mark.postgres

BURST = 600
RATE_RPS = 1.0
CLIENTS = 50
# A quarter more than the burst in all (`make chaos`: several times the burst).
REQUESTS_PER_CLIENT = (BURST + BURST // 4) // CLIENTS * SCALE


@pytest.fixture
def two_gateways(tmp_path: Path) -> Iterator[tuple[Container, list[str]]]:
    require("PostgreSQL", _reachable("127.0.0.1", 5432))
    env, schema = make_env(tmp_path, "postgres")
    env = {**os.environ, **env, "PARTNER_API_DATABASE_POOL_SIZE": "2"}
    container = Container.build(Settings.from_env(env))  # schema and secrets before the children
    env["PARTNER_API_SECRET_KEY"] = container.settings.secret_key
    env["PARTNER_API_OPERATOR_TOKEN"] = container.settings.operator_token
    processes, urls = [], []
    for _ in range(2):
        port = free_port()
        args = [*CLI, "serve", "--role", "gateway"]
        proc_env = {**env, "PARTNER_API_HTTP_PORT": str(port)}
        processes.append(subprocess.Popen(args, env=proc_env, stdout=subprocess.DEVNULL))
        urls.append(f"http://127.0.0.1:{port}")
    try:
        for url, process in zip(urls, processes, strict=True):
            wait_listening(url, process)
        yield container, urls
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=15)
        container.close()
        drop_schema(schema)


async def burst_from_clients(urls: list[str], secret: str) -> list[httpx.Response]:
    headers = {"Authorization": f"Bearer {secret}"}
    limits = httpx.Limits(max_connections=CLIENTS)
    async with httpx.AsyncClient(headers=headers, timeout=60.0, limits=limits) as client:

        async def one_client(n: int) -> list[httpx.Response]:
            return [
                await client.get(f"{urls[(n + i) % 2]}/partner/v1/me")
                for i in range(REQUESTS_PER_CLIENT)
            ]

        answers = await asyncio.gather(*(one_client(n) for n in range(CLIENTS)))
    return [response for batch in answers for response in batch]


def test_burst_from_50_clients_across_two_gateways_is_exact(
    two_gateways: tuple[Container, list[str]],
) -> None:
    container, urls = two_gateways
    org = container.accounts.create_organization("Bursty", RATE_RPS, BURST)["id"]
    secret = container.accounts.create_key(str(org), "test", "read").secret

    started = time.monotonic()
    responses = asyncio.run(burst_from_clients(urls, secret))
    elapsed = time.monotonic() - started

    statuses = [r.status_code for r in responses]
    accepted = statuses.count(200)
    refill = int(RATE_RPS * elapsed) + 1  # a token may have been part-filled when we began
    assert set(statuses) <= {200, 429}
    assert BURST <= accepted <= BURST + refill, (accepted, elapsed)
    refused = [r for r in responses if r.status_code == 429]
    assert len(refused) == len(responses) - accepted > 0
    for response in refused[:20]:
        assert response.json()["error"]["code"] == "rate_limited"
        assert int(response.headers["Retry-After"]) >= 1
    print(f"\nrate limit: {len(responses)} requests from {CLIENTS} clients over 2 gateways "
          f"in {elapsed:.1f} s: {accepted} accepted (burst {BURST}, refill <= {refill})")
