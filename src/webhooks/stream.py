"""The JetStream stream between the outbox publisher and the webhook dispatcher."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import nats
from nats.js.api import StorageType, StreamConfig
from nats.js.errors import NoStreamResponseError, NotFoundError, ServiceUnavailableError

from infra.settings import Settings

log = logging.getLogger(__name__)

# Server-side dedupe on Nats-Msg-Id covers any republish after a publisher restart; the
# dispatcher's delivery table dedupes beyond this window.
DUPLICATE_WINDOW_SECONDS = 24 * 3600.0
# What JetStream answers while the stream or its consumer has no leader: just created, or the
# cluster electing a new one after the leader's node died (4 to 8 s in test_nats_cluster.py).
# Brief and expected: asked again soon, and logged once per spell rather than every retry.
NO_LEADER_ERRORS = (NoStreamResponseError, ServiceUnavailableError)
NO_LEADER_RETRY_SECONDS = 0.25
# A message's body is the webhook envelope exactly as delivered; whom it is for travels in
# these headers, so the dispatcher stores the body as it came, without decoding it.
ORG_HEADER = "Partner-Org-Id"
ENVIRONMENT_HEADER = "Partner-Environment"
RESOURCE_HEADER = "Partner-Resource-Id"
# The stored event a message came from; on an event that says "all of it is done"
# (`PUBLISHED_LAST`) the second header: the dispatcher sends it once the first attempts of the
# other events of the same change (its parts) have ended, not side by side with them.
CHANGE_HEADER = "Partner-Change"
AFTER_PARTS_HEADER = "Partner-After-Parts"


def subject_root(settings: Settings) -> str:
    return f"{settings.nats_stream}.events"


def subject_for(settings: Settings, org_id: str) -> str:
    return f"{subject_root(settings)}.{org_id}"


def require_nats(settings: Settings) -> list[str]:
    if not settings.nats_servers:
        raise RuntimeError("webhook roles need NATS: set NATS_URL")
    return settings.nats_servers


async def connect(settings: Settings) -> Any:
    """A connection to any server NATS_URL lists: nats-py takes a cluster as a list (a
    comma-separated string is parsed as one server), and moves to another listed (or
    announced) server when the one it uses dies."""

    async def reconnected() -> None:
        where = connection.connected_url
        log.warning("NATS connection moved to %s", where.netloc if where else "?")

    connection = await nats.connect(
        require_nats(settings),
        name="partner-api-webhooks",
        max_reconnect_attempts=-1,
        reconnected_cb=reconnected,
    )
    return connection


# Publishes awaiting their ack at once (nats-py's default).
PUBLISH_SLOTS = 4000


async def connect_with_stream(
    settings: Settings, setup: Callable[[Any], Awaitable[Any]] | None = None
) -> tuple[Any, Any, Any]:
    """A NATS connection, its JetStream context with the stream in place, and what `setup(js)`
    returns (a subscription, say), however long NATS takes to be reachable: the connect itself
    retries forever, and any other failure (a malformed URL, JetStream off, a timeout while
    subscribing) is logged and the whole is tried again."""
    while True:
        nc = None
        try:
            nc = await connect(settings)
            js = nc.jetstream(publish_async_max_pending=PUBLISH_SLOTS)
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
    """The stream in place with the configured replicas: created when missing, rescaled when
    it has another count (its durable consumer follows the stream's count)."""
    try:
        info = await js.stream_info(settings.nats_stream)
    except NotFoundError:
        await js.add_stream(
            StreamConfig(
                name=settings.nats_stream,
                subjects=[f"{subject_root(settings)}.>"],
                storage=StorageType.FILE,
                duplicate_window=DUPLICATE_WINDOW_SECONDS,
                num_replicas=settings.nats_replicas,
            )
        )
        return
    if (info.config.num_replicas or 1) != settings.nats_replicas:
        log.warning(
            "NATS stream %s: %s replicas -> %d",
            settings.nats_stream,
            info.config.num_replicas or 1,
            settings.nats_replicas,
        )
        await js.update_stream(info.config.evolve(num_replicas=settings.nats_replicas))


class LeaderlessSpell:
    """Logs a spell without a JetStream leader once as it starts and once as it ends, with how
    long it lasted: what an operator needs from an election, without a traceback per retry."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.since: float | None = None

    def failed(self, error: Exception) -> None:
        if self.since is None:
            self.since = time.monotonic()
            log.warning("%s: JetStream has no leader (%r); retrying", self.what, error)

    def ended(self) -> None:
        if self.since is not None:
            took = time.monotonic() - self.since
            log.warning("%s: JetStream has a leader again after %.1f s", self.what, took)
            self.since = None
