"""The outbox publisher: follows the notification log with its own tracking position and
publishes each public event to JetStream with `Nats-Msg-Id` = its evt_ id.

The position moves only after every publish of a batch is acknowledged, so a publisher killed
at any moment loses nothing; at worst it republishes, and the stream drops the duplicates.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import nats.errors

from infra.blocking import run_blocking
from infra.database import create_if_missing
from infra.storage_health import storage_full
from projections.follower import advance_tracking_alone, ensure_tracking_table, tracked_position
from projections.json_text import compact_json_text
from webhooks.deliveries import Due, enqueue
from webhooks.event_log import DELIVERY_DDL, envelope_of
from webhooks.mappers import load_mappers
from webhooks.public_events import MAPPERS, PUBLISHED_LAST, PublicEvent, public_events_for
from webhooks.stream import (
    AFTER_PARTS_HEADER,
    CHANGE_HEADER,
    ENVIRONMENT_HEADER,
    NO_LEADER_ERRORS,
    NO_LEADER_RETRY_SECONDS,
    ORG_HEADER,
    PUBLISH_SLOTS,
    RESOURCE_HEADER,
    LeaderlessSpell,
    connect_with_stream,
    require_nats,
    subject_for,
)

if TYPE_CHECKING:
    from runtime.container import Container

log = logging.getLogger(__name__)

TRACKING_NAME = "webhook_outbox"  # its tracked position; readiness reads it
BATCH_SIZE = 500
# Acks stream back in milliseconds, fsynced or not; none for this long means they were lost
# with a server or the stream's leader (an election follows): republish rather than wait.
ACK_STALL_SECONDS = 2.0
# A commit in this process or another wakes the publisher (`on_saved`, which the process's
# commit watch also calls); the poll is the fallback should a wake-up be missed. On SQLite a
# pass first compares the event log's commit stamp and reads only after a commit.
MAX_POLL_SECONDS = 0.02
# Room left in the server's max_payload for a message's headers (a few hundred bytes).
HEADERS_ROOM = 4096
# Part ids a completion's header names at most (37 bytes each): well inside HEADERS_ROOM.
MAX_NAMED_PARTS = 64


class AcksStalled(Exception):
    """No ack came for ACK_STALL_SECONDS while some were still awaited."""


async def await_acks(acks: list[asyncio.Future[Any]]) -> None:
    """Every ack of a batch; raises the first failure, or AcksStalled once ACK_STALL_SECONDS
    passed without an ack (so a long batch takes as long as its acks keep coming)."""
    loop = asyncio.get_running_loop()
    last_ack = loop.time()

    def acked(_: asyncio.Future[Any]) -> None:
        nonlocal last_ack
        last_ack = loop.time()

    for ack in acks:
        ack.add_done_callback(acked)
    pending: set[asyncio.Future[Any]] = set(acks)
    while pending:
        left = last_ack + ACK_STALL_SECONDS - loop.time()
        if left <= 0:
            raise AcksStalled(f"{len(pending)} of {len(acks)} publishes never acknowledged")
        done, pending = await asyncio.wait(
            pending, timeout=left, return_when=asyncio.FIRST_EXCEPTION
        )
        for ack in done:
            ack.result()


def message_of(event: PublicEvent, parts: Sequence[str] = ()) -> tuple[bytes, dict[str, str]]:
    """The JetStream message of a public event: its envelope, and its headers. A completion
    names the other events of its change (`parts`), so a dispatcher that did not take them
    itself can still wait for their first attempts; past MAX_NAMED_PARTS it names none (its
    own dispatcher still orders the ones it took)."""
    headers = {
        "Nats-Msg-Id": event.id,
        ORG_HEADER: event.org_id,
        ENVIRONMENT_HEADER: event.environment,
        RESOURCE_HEADER: event.resource_id,
        CHANGE_HEADER: event.change,
    }
    if event.type in PUBLISHED_LAST:
        headers[AFTER_PARTS_HEADER] = ",".join(parts) if len(parts) <= MAX_NAMED_PARTS else "1"
    return compact_json_text(envelope_of(event)).encode(), headers


def parts_by_change(events: Sequence[PublicEvent]) -> dict[str, list[str]]:
    """The ids of each change's events that its completion goes after."""
    parts: dict[str, list[str]] = {}
    for event in events:
        if event.change and event.type not in PUBLISHED_LAST:
            parts.setdefault(event.change, []).append(event.id)
    return parts


class OutboxPublisher:
    name = "publisher"

    def __init__(self, container: Container) -> None:
        load_mappers()
        self.container = container
        self.settings = container.settings
        self.db = container.read_db.relaxed()  # a lost position republishes: JetStream dedupes
        self._nc: Any = None
        self._js: Any = None
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping = False
        # The position this publisher last committed: read from the table only when unknown,
        # since the advance is a compare-and-set that fails if another publisher moved it.
        self._position: int | None = None

    def describe(self) -> str:
        return f"outbox -> JetStream stream {self.settings.nats_stream} at {self.settings.nats_url}"

    async def start(self) -> None:
        require_nats(self.settings)
        await run_blocking(ensure_tracking_table, self.db)
        self._loop = asyncio.get_running_loop()
        self.container.store.on_saved(self._on_saved)
        self._task = asyncio.create_task(self._connect_and_run(), name="outbox-publisher")

    async def _connect_and_run(self) -> None:
        # Connected in the background: with NATS down the other roles of this process still
        # start (the gateway serves, /readyz says not ready) and SIGTERM still stops it; the
        # log waits in the store until NATS is back.
        self._nc, self._js, _ = await connect_with_stream(self.settings)
        await self._run()

    def _on_saved(self, _notification_id: int) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed() and not self._stopping:
            loop.call_soon_threadsafe(self._wake.set)

    async def stop(self) -> None:
        self._stopping = True
        if self._task is not None:
            self._task.cancel()
            # The task logs its own failures; stopping must go on to the other roles.
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        if self._nc is not None:
            await self._nc.close()

    async def _run(self) -> None:
        poll = min(max(self.settings.poll_interval_seconds, 0.01), MAX_POLL_SECONDS)
        # The commit stamp under which the log was last read to its end: while it holds,
        # nothing new can be there.
        drained_at: int | None = None
        leaderless = LeaderlessSpell(f"outbox -> stream {self.settings.nats_stream}")
        while True:
            # Cleared before the read: a commit from here on wakes the wait below.
            self._wake.clear()
            stamp = self.container.store.commit_stamp()  # before the read: no commit slips by
            more = False
            if stamp is None or stamp != drained_at:
                try:
                    # A batch that was not full read the log to its end: the next read waits
                    # for a commit (reading again at once mostly came back empty).
                    more = await self.publish_batch() >= BATCH_SIZE
                    drained_at = None if more else stamp
                    leaderless.ended()
                except asyncio.CancelledError:
                    raise
                except (*NO_LEADER_ERRORS, AcksStalled) as error:
                    leaderless.failed(error)
                    drained_at = None
                    await asyncio.sleep(NO_LEADER_RETRY_SECONDS)
                except Exception as error:
                    log.exception("outbox publish failed; retrying")
                    self._record_failure(error)
                    drained_at = None
                    await asyncio.sleep(1.0)
            if not more:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(poll):
                        await self._wake.wait()

    def _record_failure(self, error: Exception) -> None:
        """For readiness: a full disk under our own store (the position not written)."""
        if storage_full(error) and not isinstance(error, nats.errors.Error):
            self.container.storage_health.failed("event_store", error)

    def _read_batch(self) -> tuple[int, int, list[PublicEvent]]:
        previous = self._position
        if previous is None:
            previous = tracked_position(self.db, TRACKING_NAME)
        notifications = self.container.store.recorder.select_notifications(
            start=previous + 1, limit=BATCH_SIZE
        )
        if not notifications:
            return previous, previous, []
        mapper = self.container.store.mapper
        self.container.store.remember_stored(notifications)
        events: list[PublicEvent] = []
        for notification in notifications:
            if notification.topic.rpartition(":")[2] not in MAPPERS:
                continue  # not a public event: skip decoding it
            domain_event = mapper.to_domain_event(notification)
            events.extend(public_events_for(domain_event, self.container.store))
        return previous, notifications[-1].id, events

    def _advance(self, previous: int, position: int) -> None:
        self._position = None  # unknown until the advance took (a failed one raises)
        advance_tracking_alone(self.db, TRACKING_NAME, previous, position)
        self._position = position

    async def publish_batch(self) -> int:
        """Publish one batch and record the position after every ack; returns notifications done."""
        previous, position, events = await run_blocking(self._read_batch)
        if position == previous:
            return 0
        try:
            await self._publish(events)
        except Exception as error:
            # For readiness, and the embedded server's supervisor: JetStream cannot store.
            self.container.storage_health.failed("nats", error)
            raise
        self.container.storage_health.succeeded("nats")
        await run_blocking(self._advance, previous, position)
        return position - previous

    def _stall_bound(self) -> float | None:
        """How long a publish may wait for a free slot: only bounded when none is free. A
        bound costs a task per publish, whose switch let nats-py write each message to the
        socket on its own; unbounded, a batch goes out in one write."""
        if self._js.publish_async_pending() < PUBLISH_SLOTS:
            return None
        return ACK_STALL_SECONDS

    async def _publish(self, events: list[PublicEvent]) -> None:
        acks: list[asyncio.Future[Any]] = []
        too_large: list[Due] = []
        limit = int(self._nc.max_payload) - HEADERS_ROOM
        parts = parts_by_change(events)
        try:
            for event in events:
                body, headers = message_of(event, parts.get(event.change, ()))
                if len(body) > limit:
                    too_large.append(Due(event.id, event.org_id, body.decode(), tenant=event.tenant))
                    continue
                acks.append(
                    await self._js.publish_async(
                        subject_for(self.settings, event.org_id),
                        body,
                        wait_stall=self._stall_bound(),
                        headers=headers,
                    )
                )
            if too_large:
                await run_blocking(queue_directly, self.container, too_large)
            await await_acks(acks)
        finally:
            # One failed ack ends the wait with the others still pending; each holds one of
            # nats-py's in-flight publish slots until it is done, and with every slot held the
            # next publish would wait for good.
            for ack in acks:
                ack.cancel()



def queue_directly(container: Container, deliveries: list[Due]) -> None:
    """Envelopes larger than a NATS message may be (the server's max_payload, 1 MB by
    default: an order's completion with thousands of inboxes) go to the dispatchers' queue of
    deliveries directly, as their intake would have put them there: one that JetStream
    refused would otherwise be retried for good, holding back every event after it."""
    db = container.read_db.durable()
    with db.transaction() as cur:
        for statement in DELIVERY_DDL:
            create_if_missing(cur, statement)
    # Leased until now: due for the first dispatcher that looks.
    enqueue(db, deliveries, container.clock.now(), 0.0)
    log.info("queued %d webhook envelopes too large for NATS directly", len(deliveries))
