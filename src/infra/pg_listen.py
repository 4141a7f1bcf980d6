"""One PostgreSQL connection LISTENing on a channel, for as long as its owner runs.

Reconnects after any failure; TCP keepalives notice a connection that died without an error
(a host gone, a partition) within about 25 s, where libpq's defaults take hours.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import psycopg
from psycopg.sql import SQL, Identifier

log = logging.getLogger(__name__)

# How long one wait for notifications lasts before it looks whether it should stop (and tells
# `on_quiet`); after a failure, the pause before connecting again.
SLICE_SECONDS = 0.5
RECONNECT_SECONDS = 0.5


def listen(
    url: str,
    channel: str,
    *,
    stopped: Callable[[], bool],
    on_listening: Callable[[], None],
    on_note: Callable[[str], None],
    on_quiet: Callable[[], None] = lambda: None,
) -> None:
    """Until `stopped()`: `on_listening` once each connection listens (what was committed
    before may have gone unheard), `on_note` with each notification's payload as it arrives,
    `on_quiet` after a slice that brought none."""
    while not stopped():
        try:
            with psycopg.connect(
                url, autocommit=True, connect_timeout=5, keepalives=1, keepalives_idle=10,
                keepalives_interval=5, keepalives_count=3,
            ) as conn:
                conn.execute(SQL("LISTEN {}").format(Identifier(channel)))
                on_listening()
                while not stopped():
                    heard = False
                    for note in conn.notifies(timeout=SLICE_SECONDS):
                        on_note(note.payload)
                        heard = True
                    if not heard:
                        on_quiet()
        except Exception as failure:
            if not stopped():
                log.warning("listening on %s failed (%s); listening again", channel, failure)
            time.sleep(RECONNECT_SECONDS)
