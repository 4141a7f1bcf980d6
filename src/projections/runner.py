"""Runs the read models over the event log and offers read-your-writes waits."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from infra.database import Database, PostgresDatabase
from infra.store import EventStore
from projections.base import ReadModel
from projections.follower import Follower, tracked_position
from projections.position_watch import (
    ListeningPositionWatch,
    PositionWatch,
    announce_position,
    position_channel,
)

# A write answers once the read models show it. Under load the projections can trail by seconds;
# past this bound the write still answers (the event is stored), so a dead projections role
# slows writes down instead of stopping them.
READ_YOUR_WRITES_SECONDS = 10.0

# Another process runs the projections: it commits what it applied at least every
# MAX_BATCH_SECONDS while it has work, so a position that stands still this long means that
# process is down (or stuck), and the write answers rather than hold the client for the bound.
STALLED_SECONDS = 2.0

READ_MODELS_TRACKING = "read_models"


class ReadModels:
    def __init__(
        self,
        store: EventStore,
        db: Database,
        models: list[ReadModel],
        poll_interval: float = 0.05,
    ) -> None:
        self.db = db
        self.models = models
        for model in self.models:
            model.attach(store)
        with db.transaction() as cur:
            for model in self.models:
                model.create_tables(cur)

        def read_position() -> int:
            return tracked_position(db, READ_MODELS_TRACKING)

        self._elsewhere: PositionWatch = PositionWatch(read_position)
        announce = None
        if isinstance(db, PostgresDatabase):
            channel = position_channel(db.schema)
            self._elsewhere = ListeningPositionWatch(read_position, db.url, channel)

            def announce(cur: Any, position: int) -> None:
                announce_position(cur, channel, position)

        self.follower = Follower(
            store,
            db,
            READ_MODELS_TRACKING,
            self._apply,
            poll_interval=poll_interval,
            after_batch=self._tell_listeners,
            announce=announce,
            batch_writes=True,
        )
        self.running_here = False
        self._listeners: list[Callable[[set[str]], None]] = []
        self._applied: set[str] = set()  # event names of the batch being applied

    def on_applied(self, listener: Callable[[set[str]], None]) -> None:
        """Called after each batch this process applies, with its event names (`Swap.Created`):
        workers reading these tables wake when there is something new to read."""
        self._listeners.append(listener)

    def _apply(self, cur: Any, event: Any, notification_id: int) -> None:
        self._applied.add(type(event).__qualname__)
        for model in self.models:
            model.apply(cur, event, notification_id)

    def _tell_listeners(self) -> None:
        applied, self._applied = self._applied, set()
        for listener in self._listeners:
            listener(applied)

    def start(self) -> None:
        self.follower.start()
        self.running_here = True

    def stop(self) -> None:
        self.follower.stop()
        self.running_here = False

    def close(self) -> None:
        """Stops everything this runs, the read of another process's position too."""
        self.stop()
        self._elsewhere.close()

    def catch_up(self) -> None:
        self.follower.catch_up()

    def wait_for_stored(self, recorder: Any) -> bool:
        """Wait until the read models show everything stored so far: for an answer read from
        an aggregate a worker saved (without waiting), whose effects a partner will next look
        for in a list."""
        return self.wait_for(recorder.max_notification_id() or 0)

    def wait_for(self, notification_id: int, timeout: float = READ_YOUR_WRITES_SECONDS) -> bool:
        """Read-your-writes: wait until every read model has applied this notification."""
        if self.running_here:
            return self.follower.wait_for(notification_id, timeout)
        return self._elsewhere.wait_for(notification_id, timeout, STALLED_SECONDS)

    def tables(self) -> list[str]:
        return [table for model in self.models for table in model.tables]
