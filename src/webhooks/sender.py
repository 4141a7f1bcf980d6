"""The HTTP side of webhook delivery: one POST per attempt, through aiohttp.

aiohttp rather than httpx: at a few hundred deliveries a second httpx's pool and stream layers
cost about 1.6 ms of CPU per request on a small machine, aiohttp about 0.2 ms, and a backlog
built up behind that CPU at 200 events a second.

Each organization has its own session and connection pool, sized to its concurrency, so a hung
receiver holds only its own connections. Redirects are never followed (a 3xx is a failed
attempt). Unless HTTP webhooks are allowed, every new connection goes only to addresses that
were checked public when the name was resolved for that connection: the check and the connect
see the same address, so a name re-pointed at an internal address after registration is
refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import socket
import ssl
import time
from dataclasses import dataclass

import aiohttp
from aiohttp.abc import ResolveResult
from aiohttp.resolver import ThreadedResolver

from infra.addresses import is_public_address, literal_address
from webhooks.urls import check_url_shape

USER_AGENT = "partner-api-webhooks/1"
# A receiver's answer is not used: read this much of it so the connection can be kept, and
# drop the connection rather than read a larger one.
MAX_RESPONSE_BYTES = 64 * 1024


class AddressRefused(Exception):
    """The webhook host is, or resolves to, an address deliveries must not go to."""


class PublicOnlyResolver(ThreadedResolver):
    """Resolves as usual and refuses the name when any of its addresses is not public."""

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        try:
            found = await super().resolve(host, port, family)
        except OSError as exc:
            raise AddressRefused(f"could not resolve {host}") from exc
        if not found:
            raise AddressRefused(f"could not resolve {host}")
        if any(not is_public_address(result["host"]) for result in found):
            raise AddressRefused(f"{host} resolves to a non-public address")
        return found


@dataclass(frozen=True)
class Answer:
    """What one attempt came to: the receiver's status, or why there is none."""

    status_code: int | None
    error: str | None


@functools.lru_cache(maxsize=4096)
def shape_refusal(url: str, allow_http: bool) -> str | None:
    """Why this URL must not be posted to, as far as can be told without resolving it.

    Kept per URL: it depends on nothing else, and parsing it (an address literal, IDNA) cost
    about 4% of the service's CPU under a stream of orders, three deliveries each."""
    try:
        host = check_url_shape(url, allow_http)
    except Exception as exc:  # noqa: BLE001 - the message is recorded on the attempt
        return str(exc)
    if allow_http:
        return None
    address = literal_address(host)
    if address is not None and not is_public_address(address):
        return f"{host} resolves to a non-public address"
    return None


class WebhookSender:
    def __init__(
        self, timeout: float, allow_http: bool, connections_per_org: int, tls: ssl.SSLContext
    ) -> None:
        self.timeout = timeout
        self.allow_http = allow_http
        self.connections_per_org = connections_per_org
        self._tls = tls
        self._sessions: dict[str, aiohttp.ClientSession] = {}
        self._used: dict[str, float] = {}

    async def post(self, org_id: str, url: str, body: bytes, headers: dict[str, str]) -> Answer:
        refusal = shape_refusal(url, self.allow_http)
        if refusal is not None:
            return Answer(None, f"refused: {refusal}")
        headers["Content-Type"] = "application/json"
        headers["User-Agent"] = USER_AGENT
        session = self._session_for(org_id)
        try:
            async with asyncio.timeout(self.timeout):
                async with session.post(
                    url, data=body, headers=headers, allow_redirects=False
                ) as response:
                    await _drain(response)
                    status = response.status
        except TimeoutError:
            return Answer(None, f"timed out after {self.timeout:g} s")
        except AddressRefused as exc:
            return Answer(None, f"refused: {exc}")
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            return Answer(None, f"{type(exc).__name__}: {exc}"[:500])
        error = None if 200 <= status < 300 else f"HTTP {status}"
        return Answer(status, error)

    def _session_for(self, org_id: str) -> aiohttp.ClientSession:
        self._used[org_id] = time.monotonic()
        session = self._sessions.get(org_id)
        if session is None:
            connector = aiohttp.TCPConnector(
                limit=self.connections_per_org,
                limit_per_host=0,
                ssl=self._tls,
                resolver=None if self.allow_http else PublicOnlyResolver(),
            )
            session = self._sessions[org_id] = aiohttp.ClientSession(
                connector=connector,
                # The time-out above covers the whole attempt; this is only a backstop.
                timeout=aiohttp.ClientTimeout(total=self.timeout + 1.0),
                # A webhook carries no state from one answer to the next request.
                cookie_jar=aiohttp.DummyCookieJar(),
                # The answer's body is thrown away: nothing to ask compressed or to decompress.
                auto_decompress=False,
                skip_auto_headers=("Accept-Encoding",),
                # Proxy settings from the environment would take connections past the address
                # check; deliveries always connect directly.
                trust_env=False,
            )
        return session

    async def close_idle(self, idle_seconds: float) -> None:
        """Close the sessions of organizations with nothing sent for a while; a request started
        after that would have taken the session again, so none of them is in use."""
        idle_since = time.monotonic() - idle_seconds
        for org_id, used in list(self._used.items()):
            # Checked again here: an await below may have let this organization send meanwhile.
            if used < idle_since and self._used.get(org_id, 0.0) < idle_since:
                self._used.pop(org_id, None)
                session = self._sessions.pop(org_id, None)
                if session is not None:
                    with contextlib.suppress(Exception):  # a session that fails to close is dropped
                        await session.close()

    async def close(self) -> None:
        sessions, self._sessions = list(self._sessions.values()), {}
        self._used.clear()
        for session in sessions:
            with contextlib.suppress(Exception):
                await session.close()


async def _drain(response: aiohttp.ClientResponse) -> None:
    received = 0
    while chunk := await response.content.readany():
        received += len(chunk)
        if received > MAX_RESPONSE_BYTES:
            response.close()  # cheaper to connect again than to read on
            return
