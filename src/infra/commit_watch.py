"""Wakes what follows the event log in this process when another process commits to it.

A save in this process wakes the followers at once (`EventStore.on_saved`); a save in another
process (a gateway of its own, the worker's completion) was seen only at their next poll, up to
a poll interval later at each hop of an order's way to its webhooks. PostgreSQL: the insert
function NOTIFYs the log's channel at every commit, and one connection here LISTENs to it.
SQLite: the log's commit stamp (`PRAGMA data_version`, a few microseconds), read every few
milliseconds on one connection.
"""

from __future__ import annotations

import logging
import threading

from infra.pg_listen import SLICE_SECONDS, listen
from infra.store import EventStore

log = logging.getLogger(__name__)

SQLITE_POLL_SECONDS = 0.002
# After a failure to read the commit stamp, the wait before reading again (the followers poll
# meanwhile, as they always do).
RECONNECT_SECONDS = 1.0


class CommitWatch:
    def __init__(self, store: EventStore, database_url: str | None) -> None:
        self.store = store
        self.database_url = database_url
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        run = self._listen if self.database_url else self._watch_stamp
        self._thread = threading.Thread(target=run, name="commit-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2 * SLICE_SECONDS)

    def _watch_stamp(self) -> None:
        seen: int | None = None  # the first stamp read wakes them once: harmless
        while not self._stop.wait(SQLITE_POLL_SECONDS):
            try:
                stamp = self.store.commit_stamp()
            except Exception:
                log.exception("reading the event log's commit stamp failed; retrying")
                self._stop.wait(RECONNECT_SECONDS)
                continue
            if stamp != seen:
                seen = stamp
                self.store.wake_followers()

    def _listen(self) -> None:
        assert self.database_url is not None
        channel = getattr(self.store.recorder, "channel_name", None)
        if channel is None:
            return  # a recorder that does not notify: the followers' polls see every commit
        listen(
            self.database_url,
            channel,
            stopped=self._stop.is_set,
            on_listening=self.store.wake_followers,  # what committed while not listening
            on_note=lambda _payload: self.store.wake_followers(),
        )
