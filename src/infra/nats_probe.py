"""Whether a nats-server's JetStream can store a message right now.

Reachable is not enough: after its disk filled, a nats-server answers every client while its
JetStream refuses (or silently fails) every write, even once space is back. The probe writes
one message to a one-message file stream of its own, as the outbox would, every few seconds.
"""

from __future__ import annotations

import asyncio

import nats
from nats.js.api import DiscardPolicy, StorageType, StreamConfig
from nats.js.errors import NotFoundError

PROBE_STREAM = "PARTNER_API_STORAGE_PROBE"
PROBE_SUBJECT = "partner_api.storage_probe"
PROBE_TIMEOUT_SECONDS = 3.0
# More than a page: a write that only fills a page the file already has succeeds on a full
# disk, so a tiny probe said "stored" while every real message failed.
PROBE_BYTES = 8 * 1024


async def _store_one(url: str, timeout: float) -> None:
    nc = await nats.connect(
        url, connect_timeout=timeout, allow_reconnect=False, max_reconnect_attempts=0,
        name="partner-api-storage-probe",
    )
    try:
        js = nc.jetstream(timeout=timeout)
        try:
            await js.stream_info(PROBE_STREAM)
        except NotFoundError:
            await js.add_stream(
                StreamConfig(
                    name=PROBE_STREAM,
                    subjects=[PROBE_SUBJECT],
                    storage=StorageType.FILE,
                    max_msgs=1,
                    discard=DiscardPolicy.OLD,
                )
            )
        await js.publish(PROBE_SUBJECT, b"\0" * PROBE_BYTES, timeout=timeout)
    finally:
        await nc.close()


def jetstream_cannot_store(url: str, timeout: float = PROBE_TIMEOUT_SECONDS) -> str | None:
    """None when a message was stored and acknowledged, else why not. Blocking: call it from
    a thread of its own (the embedded server's supervisor)."""

    async def bounded() -> None:
        await asyncio.wait_for(_store_one(url, timeout), timeout * 3)

    try:
        asyncio.run(bounded())
    except Exception as error:  # noqa: BLE001 - any failure is the answer
        return f"{type(error).__name__}: {error}".strip().rstrip(":")
    return None
