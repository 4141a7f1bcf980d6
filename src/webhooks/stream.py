"""The JetStream stream between the outbox publisher and the webhook dispatcher."""

from __future__ import annotations

from typing import Any

import nats
from nats.js.api import StorageType, StreamConfig
from nats.js.errors import NotFoundError

from infra.settings import Settings

# Server-side dedupe on Nats-Msg-Id covers any republish after a publisher restart; the
# dispatcher's delivery table dedupes beyond this window.
DUPLICATE_WINDOW_SECONDS = 24 * 3600.0


def subject_root(settings: Settings) -> str:
    return f"{settings.nats_stream}.events"


def subject_for(settings: Settings, org_id: str) -> str:
    return f"{subject_root(settings)}.{org_id}"


async def connect(settings: Settings) -> Any:
    if not settings.nats_url:
        raise RuntimeError("webhook roles need NATS: set NATS_URL")
    return await nats.connect(
        settings.nats_url, name="partner-api-webhooks", max_reconnect_attempts=-1
    )


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
