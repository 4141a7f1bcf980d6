"""The JetStream stream between the outbox publisher and the webhook dispatcher."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import nats
from nats.js.api import StorageType, StreamConfig
from nats.js.errors import NotFoundError

from infra.settings import Settings

log = logging.getLogger(__name__)

# Server-side dedupe on Nats-Msg-Id covers any republish after a publisher restart; the
# dispatcher's delivery table dedupes beyond this window.
DUPLICATE_WINDOW_SECONDS = 24 * 3600.0


def subject_root(settings: Settings) -> str:
    return f"{settings.nats_stream}.events"


def subject_for(settings: Settings, org_id: str) -> str:
    return f"{subject_root(settings)}.{org_id}"


def require_nats(settings: Settings) -> str:
    if not settings.nats_url:
        raise RuntimeError("webhook roles need NATS: set NATS_URL")
    return settings.nats_url


Reconnected = Callable[[], Awaitable[None]]


async def connect(settings: Settings, reconnected: Reconnected | None = None) -> Any:
    """`reconnected` is awaited each time the connection is back after a loss."""
    hooks = {"reconnected_cb": reconnected} if reconnected is not None else {}
    return await nats.connect(
        require_nats(settings), name="partner-api-webhooks", max_reconnect_attempts=-1, **hooks
    )


async def connect_with_stream(
    settings: Settings,
    setup: Callable[[Any], Awaitable[Any]] | None = None,
    reconnected: Reconnected | None = None,
) -> tuple[Any, Any, Any]:
    """A NATS connection, its JetStream context with the stream in place, and what `setup(js)`
    returns (a subscription, say), however long NATS takes to be reachable: the connect itself
    retries forever, and any other failure (a malformed URL, JetStream off, a timeout while
    subscribing) is logged and the whole is tried again."""
    while True:
        nc = None
        try:
            nc = await connect(settings, reconnected)
            js = nc.jetstream()
            await ensure_stream(js, settings)
            return nc, js, (await setup(js) if setup is not None else None)
        except asyncio.CancelledError:
            if nc is not None:
                await nc.close()
            raise
        except Exception:
            log.exception("NATS stream %s not ready; retrying", settings.nats_stream)
            if nc is not None:
                with contextlib.suppress(Exception):
                    await nc.close()
            await asyncio.sleep(1.0)


async def ensure_stream(js: Any, settings: Settings) -> None:
    try:
        await js.stream_info(settings.nats_stream)
        return
    except NotFoundError:
        pass
    await js.add_stream(
        StreamConfig(
            name=settings.nats_stream,
            subjects=[f"{subject_root(settings)}.>"],
            storage=StorageType.FILE,
            duplicate_window=DUPLICATE_WINDOW_SECONDS,
        )
    )
