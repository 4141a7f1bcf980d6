"""The webhook dispatcher: a durable JetStream consumer that signs and POSTs each event.

Intake records each message as a pending delivery (claimed by this process) and only then
acks it, so JetStream keeps anything not yet durable here. From then on the delivery table
drives the attempts: retries follow the schedule, a dispatcher that dies loses its claims when
their lease runs out, and another (or the restarted one) carries on. Each organization has its
own small concurrency allowance, so a slow or failing receiver only ever waits on itself.
Fresh events go out side by side; the due rows of a poll (retries, redeliveries) go out one
organization's at a time in due order, so a bulk redelivery reaches the receiver oldest first
(decisions 7), which attempts side by side would not keep.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from uuid import UUID

import httpx
from nats.errors import TimeoutError as NatsTimeout
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

from domain.events import event_names
from domain.organizations import Organization
from domain.sandbox_clocks import sandbox_clock_id
from infra.blocking import run_blocking
from infra.ids import parse_id
from webhooks.batched_lookup import BatchedLookup
from webhooks.change_order import ChangeOrder, after, after_named_parts
from webhooks.deliveries import (
    Due,
    Outcome,
    claim_due,
    enqueue,
    record_attempts,
    release,
    renew_claim,
)
from webhooks.endpoints import Endpoint, endpoints_of
from webhooks.lanes import CONNECTIONS_PER_ORG, in_due_order
from webhooks.messages import due_of
from webhooks.sender import WebhookSender
from webhooks.signing import signed_headers
from webhooks.stream import (
    NO_LEADER_ERRORS,
    NO_LEADER_RETRY_SECONDS,
    LeaderlessSpell,
    connect_with_stream,
    require_nats,
    subject_root,
)

if TYPE_CHECKING:
    from runtime.container import Container

log = logging.getLogger(__name__)

TOTAL_CONCURRENCY = 256
FETCH_BATCH = 256
# nats-py's fetch(n > 1) holds a long pull open until n messages or its time-out: waiting
# there would add up to the time-out to every event's lag. So wait for one message, then take
# the ones its metadata says are waiting behind it with a short follow-up pull; with none
# waiting (the usual case at a steady rate) there is no follow-up request at all.
FOLLOW_UP_SECONDS = 0.005
CLIENT_IDLE_SECONDS = 300.0
CONSUMER = "webhook-dispatcher"  # one durable consumer shared by every dispatcher process
# A message handed to a pull that was lost with its server (a consumer leader that died)
# comes again only after this: intake records a batch in well under a second, and a message
# that does come twice is recorded once.
ACK_WAIT_SECONDS = 10.0
# Only these organization events change where and how deliveries go; others (a test event
# request, a rate-limit change) leave a cached endpoint valid.
ENDPOINT_EVENTS = event_names(Organization.WebhookEndpointSet, Organization.WebhookSecretRotated)


class WebhookDispatcher:
    name = "dispatcher"

    def __init__(self, container: Container) -> None:
        self.container = container
        self.settings = container.settings
        self.db = container.read_db
        # JetStream forgets a message once acked, so the delivery row must be on disk first.
        self.intake_db = container.read_db.durable()
        self.timeout = self.settings.webhook_timeout_seconds
        # A claim outlives one attempt (time-out plus margin) and then returns to the pool.
        self.lease = self.timeout + 5.0
        self._org_slots: defaultdict[str, asyncio.Semaphore] = defaultdict(
            lambda: asyncio.Semaphore(CONNECTIONS_PER_ORG)
        )
        self._slots = asyncio.Semaphore(TOTAL_CONCURRENCY)
        self._in_flight: set[str] = set()
        # Per organization, the due rows waiting for their turn in its lane (`_line_up`).
        self._lanes: dict[str, list[Due]] = {}
        self._change_order = ChangeOrder()
        self._tasks: set[asyncio.Task[None]] = set()
        self._loops: list[asyncio.Task[None]] = []
        self._endpoints: dict[str, tuple[Endpoint | None, int]] = {}
        # Read just before each attempt (a rotated secret signs the next one), many per hop.
        self._current_endpoints = BatchedLookup(self._endpoints_now)
        self._outcomes: list[tuple[Due, Outcome, asyncio.Future[str]]] = []
        self._writer: asyncio.Task[None] | None = None
        self._nc: Any = None
        # httpx's TLS defaults (certifi's roots), built once: loading them costs a quarter second.
        self._sender = WebhookSender(
            self.timeout,
            self.settings.allow_http_webhooks,
            CONNECTIONS_PER_ORG,
            httpx.create_ssl_context(),
        )

    def describe(self) -> str:
        return f"webhook deliveries from JetStream stream {self.settings.nats_stream}"

    async def start(self) -> None:
        require_nats(self.settings)
        # Connected in the background, as the outbox publisher: NATS down must not hold the
        # process's start (or its SIGTERM); new events wait in the stream until it is back,
        # while retries of deliveries already stored go on.
        self._loops = [
            asyncio.create_task(self._connect_and_take_in(), name="webhook-intake"),
            asyncio.create_task(self._poll_due(), name="webhook-due"),
        ]

    async def _connect_and_take_in(self) -> None:
        self._nc, _, subscription = await connect_with_stream(self.settings, self._subscribe)
        await self._intake(subscription)

    async def _subscribe(self, js: Any) -> Any:
        subjects = f"{subject_root(self.settings)}.>"
        config = ConsumerConfig(
            name=CONSUMER,
            durable_name=CONSUMER,
            filter_subject=subjects,
            ack_policy=AckPolicy.EXPLICIT,
            deliver_policy=DeliverPolicy.ALL,
            ack_wait=ACK_WAIT_SECONDS,
            max_ack_pending=20_000,
        )
        # Created, or brought to this config when it exists: nats-py's pull_subscribe binds an
        # existing durable as it is, so a changed setting would never reach it.
        await js.add_consumer(self.settings.nats_stream, config)
        return await js.pull_subscribe_bind(durable=CONSUMER, stream=self.settings.nats_stream)

    async def stop(self) -> None:
        # Deliveries first, so the attempts they finished are still written by the writer.
        for task in [*self._loops, *self._tasks]:
            task.cancel()
        await asyncio.gather(*self._loops, *self._tasks, return_exceptions=True)
        if self._writer is not None:
            await asyncio.gather(self._writer, return_exceptions=True)
        for event_id in list(self._in_flight):
            await run_blocking(release, self.db, event_id)
        await self._current_endpoints.close()
        await self._sender.close()
        if self._nc is not None:
            await self._nc.close()

    async def _intake(self, subscription: Any) -> None:
        leaderless = LeaderlessSpell(f"dispatcher <- stream {self.settings.nats_stream}")
        while True:
            try:
                messages = await subscription.fetch(1, timeout=1.0)
                leaderless.ended()
            except (NatsTimeout, TimeoutError):
                leaderless.ended()  # the pull was taken (a leaderless one is refused at once)
                continue
            except asyncio.CancelledError:
                raise
            except NO_LEADER_ERRORS as error:
                leaderless.failed(error)
                await asyncio.sleep(NO_LEADER_RETRY_SECONDS)
                continue
            except Exception:
                log.exception("webhook intake fetch failed; retrying")
                await asyncio.sleep(1.0)
                continue
            waiting = _waiting_behind(messages[-1])
            if waiting:  # nothing more, or a failed follow-up: go on with the message in hand
                with contextlib.suppress(Exception):
                    messages += await subscription.fetch(waiting, timeout=FOLLOW_UP_SECONDS)
            try:
                await self._take_in(messages)
            except asyncio.CancelledError:
                raise
            except Exception:
                # A dropped database connection or NATS gone mid-ack must not end the intake:
                # what is not acked comes back from JetStream, and enqueue ignores repeats.
                log.exception("webhook intake of %d messages failed; retrying", len(messages))
                for message in messages:
                    with contextlib.suppress(Exception):
                        await message.nak(delay=1.0)
                await asyncio.sleep(1.0)

    async def _take_in(self, messages: list[Any]) -> None:
        items = [due_of(message.data, message.headers) for message in messages]
        new, endpoints = await run_blocking(
            self._enqueue_and_read_endpoints, items, self.container.clock.now()
        )
        for message in messages:
            await message.ack()
        for due in new:
            self._spawn(due, endpoints)

    def _enqueue_and_read_endpoints(
        self, items: list[Due], now: float
    ) -> tuple[list[Due], dict[str, Endpoint | None]]:
        """Record the deliveries, then read the endpoints of the new ones' organizations in the
        same thread hop (one hop less before the first attempt): read after the events were
        stored, as an attempt starting now would read them."""
        new = enqueue(self.intake_db, items, now, self.lease)
        read = self._endpoints_now(list({due.org_id for due in new}))
        # One that failed is left out: the attempt reads it again, and logs.
        endpoints = {org: found for org, found in read.items() if not isinstance(found, Exception)}
        return new, endpoints

    async def _poll_due(self) -> None:
        interval = min(0.25, max(self.settings.poll_interval_seconds, 0.02))
        next_sweep = time.monotonic() + CLIENT_IDLE_SECONDS / 10
        while True:
            try:
                claimed = await run_blocking(
                    claim_due, self.db, self.container.clock.now(), self.lease, set(self._in_flight)
                )
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("webhook due-poll failed; retrying")
                claimed = []
            for due in claimed:
                self._line_up(due)
            if time.monotonic() > next_sweep:
                next_sweep = time.monotonic() + CLIENT_IDLE_SECONDS / 10
                await self._sender.close_idle(max(CLIENT_IDLE_SECONDS, 2 * self.lease))
            await asyncio.sleep(interval)

    def _line_up(self, due: Due) -> None:
        """A due row after the ones of its organization already waiting: one lane per
        organization, attempts started one after another in due order (`webhooks.lanes`)."""
        if due.event_id in self._in_flight:
            return
        self._in_flight.add(due.event_id)
        lane = self._lanes.get(due.org_id)
        if lane is not None:
            lane.append(due)
            return
        self._lanes[due.org_id] = [due]
        task = asyncio.create_task(self._run_lane(due.org_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run_lane(self, org_id: str) -> None:
        lane = self._lanes[org_id]

        def waiting() -> Iterator[Due]:
            while lane:  # rows lined up while the lane runs join it
                yield lane.pop(0)

        try:
            while lane:  # checked again after the last attempts ended: no wait until `del`
                await in_due_order(waiting(), lambda due: self._deliver(due, {}))
        finally:
            del self._lanes[org_id]

    def _spawn(self, due: Due, endpoints: dict[str, Endpoint | None] | None = None) -> None:
        if due.event_id in self._in_flight:
            return
        self._in_flight.add(due.event_id)
        parts = self._change_order.parts_of(due)
        task = asyncio.create_task(self._deliver_after(parts, due, endpoints or {}))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        self._change_order.track(due, task)

    async def _deliver_after(
        self, parts: set[asyncio.Task[None]], due: Due, endpoints: dict[str, Endpoint | None]
    ) -> None:
        waited = await after(parts, self.lease)
        elsewhere = self._change_order.taken_elsewhere(due)
        if await after_named_parts(self.db, elsewhere, self.lease) or waited:
            endpoints = {}  # read again: the wait may have been long
        await self._deliver(due, endpoints)

    async def _deliver(self, due: Due, endpoints: dict[str, Endpoint | None]) -> None:
        try:
            org_slots = self._org_slots[due.org_id]
            if org_slots.locked() or self._slots.locked():
                endpoints = {}  # read before a wait for a slot: read again when it starts
            async with org_slots, self._slots:
                if not await self._lease_covers_attempt(due):
                    return
                outcome = await self._attempt(due, endpoints)
            status = await self._record(due, outcome)
            if status == "failed":
                log.warning("webhook %s failed after its last attempt", due.event_id)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("webhook delivery of %s crashed; its lease will expire", due.event_id)
        finally:
            self._in_flight.discard(due.event_id)

    async def _lease_covers_attempt(self, due: Due) -> bool:
        """Whether this dispatcher still holds the delivery for a whole attempt. A claim that
        waited for a slot until its lease had less than one time-out left is renewed first, or
        given up if another dispatcher took it over meanwhile (two would post it at once)."""
        now = self.container.clock.now()
        if due.leased_until - now > self.timeout + 1.0:
            return True
        return await run_blocking(renew_claim, self.db, due, now + self.lease)

    async def _attempt(self, due: Due, endpoints: dict[str, Endpoint | None]) -> Outcome:
        attempted_at = self.container.clock.now()
        started = time.perf_counter()

        def done(status_code: int | None, error: str | None) -> Outcome:
            elapsed = (time.perf_counter() - started) * 1000
            return Outcome(attempted_at, elapsed, status_code, error)

        if due.org_id in endpoints:  # read just now, at intake
            endpoint = endpoints[due.org_id]
        else:
            endpoint = await self._current_endpoints.get(due.org_id)
        if endpoint is None:
            return done(None, "no webhook endpoint registered")
        body = due.payload.encode()
        headers = signed_headers(
            endpoint.secret, int(self.container.clock.now()), due.event_id, body
        )
        answer = await self._sender.post(due.org_id, endpoint.url, body, headers)
        return done(answer.status_code, answer.error)

    async def _record(self, due: Due, outcome: Outcome) -> str:
        """Store the attempt; attempts finishing while a write is on its way share the next
        transaction (one commit per batch instead of one per delivery)."""
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._outcomes.append((due, outcome, future))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_outcomes(), name="webhook-attempts")
        return await future

    async def _write_outcomes(self) -> None:
        while self._outcomes:
            batch, self._outcomes = self._outcomes, []
            try:
                statuses = await run_blocking(self._record_batch, batch)
            except Exception as exc:  # each waiting delivery logs it; their leases expire
                for _, _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for (_, _, future), status in zip(batch, statuses, strict=True):
                if not future.done():
                    future.set_result(status)

    def _record_batch(self, batch: list[tuple[Due, Outcome, Any]]) -> list[str]:
        now = self.container.clock.now()
        offsets = self._sandbox_offsets({due.org_id for due, _, _ in batch
                                         if due.tenant.endswith(":test")})
        outcomes = []
        for due, outcome, _ in batch:
            if due.tenant.endswith(":test"):
                # A sandbox delivery's attempt and its next retry are on its sandbox clock.
                offset = offsets[due.org_id]
                outcome = replace(
                    outcome, attempted_at=outcome.attempted_at + offset, scheduled_from=now + offset
                )
            outcomes.append((due.event_id, outcome))
        return record_attempts(self.db, outcomes, self.settings.webhook_retry_schedule, now)

    def _sandbox_offsets(self, org_ids: set[str]) -> dict[str, float]:
        """The sandbox clock offsets of these organizations, their clocks' versions read in
        one statement."""
        clocks = {org_id: sandbox_clock_id(org_id) for org_id in org_ids}
        versions = self.container.store.latest_versions(list(clocks.values())) if clocks else {}
        return {
            org_id: self.container.clock.offset_of(org_id, versions.get(clock, 0))
            for org_id, clock in clocks.items()
        }

    def _endpoints_now(self, org_ids: list[str]) -> dict[str, Endpoint | None | Exception]:
        """The endpoints of these organizations as they are now: their versions read in one
        statement, an endpoint loaded again only for an organization that changed it."""
        uuids = {org_id: parse_id("org", org_id) for org_id in org_ids}
        try:
            known = [org_uuid for org_uuid in uuids.values() if org_uuid is not None]
            versions = self.container.store.latest_versions(known) if known else {}
        except Exception as exc:  # noqa: BLE001 - every waiter of this batch gets it
            return dict.fromkeys(org_ids, exc)
        found: dict[str, Endpoint | None | Exception] = {}
        for org_id, org_uuid in uuids.items():
            try:
                found[org_id] = self._endpoint(org_id, org_uuid, versions)
            except Exception as exc:  # noqa: BLE001 - one organization's failure is its own
                found[org_id] = exc
        return found

    def _endpoint(
        self, org_id: str, org_uuid: UUID | None, versions: dict[UUID, int]
    ) -> Endpoint | None:
        """The org's endpoint, cached until the organization changes its endpoint."""
        if org_uuid is None or org_uuid not in versions:
            return None  # no such organization
        cached = self._endpoints.get(org_id)
        if cached is not None:
            if versions[org_uuid] == cached[1]:
                return cached[0]
            newer = self.container.store.recorder.select_events(org_uuid, gt=cached[1])
            if newer and not any(e.topic.endswith(ENDPOINT_EVENTS) for e in newer):
                self._endpoints[org_id] = (cached[0], newer[-1].originator_version)
                return cached[0]
        org = self.container.store.find(org_uuid, Organization)
        if org is None:
            return None
        endpoint = endpoints_of(self.container).endpoint(org_id)
        self._endpoints[org_id] = (endpoint, int(org.version))
        return endpoint


def _waiting_behind(message: Any) -> int:
    """How many messages to ask for after this one: as many as the stream says are waiting
    for the consumer, up to a batch (a whole batch when the metadata cannot be read)."""
    try:
        pending = int(message.metadata.num_pending)
    except Exception:  # noqa: BLE001 - not a JetStream reply subject: ask for a batch
        pending = FETCH_BATCH
    return min(pending, FETCH_BATCH - 1)
