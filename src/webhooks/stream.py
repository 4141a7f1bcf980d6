"""The JetStream stream between the outbox publisher and the webhook dispatcher."""

from __future__ import annotations

import asyncio
import logging
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


async def connect(settings: Settings) -> Any:
    return await nats.connect(
        require_nats(settings), name="partner-api-webhooks", max_reconnect_attempts=-1
    )


async def connect_with_stream(settings: Settings) -> tuple[Any, Any]:
    """A NATS connection and its JetStream context with the stream in place, however long
    NATS takes to be reachable (the connect itself retries forever); a failure after the
    connect (JetStream off, say) is logged and retried."""
    while True:
        nc = await connect(settings)
        try:
            js = nc.jetstream()
            await ensure_stream(js, settings)
            return nc, js
        except asyncio.CancelledError:
            await nc.close()
            raise
        except Exception:
            log.exception("JetStream stream %s not ready; retrying", settings.nats_stream)
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
