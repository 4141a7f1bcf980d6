"""The event store: one eventsourcing Application whose repository holds every aggregate.

Its persistence is built here, in one place, from our own settings (SQLite file by default,
PostgreSQL when a database URL is configured).
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, cast
from urllib.parse import unquote, urlparse
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.domain import Aggregate, CanMutateProtocol
from eventsourcing.persistence import Mapper, Notification, Recording

from infra.event_decoding import DecodingMapper
from infra.pg_recorder import OneStatementRecorder
from infra.settings import Settings

APPLICATION_NAME = "partner"
# Aggregates kept by (id, version): enough for every reader to find an order the others
# just rebuilt, while a burst of orders is in flight.
VERSIONS_CACHED = 1024
# Aggregates whose stored events are kept for `at_version`, and the most events kept of one:
# what is in flight (orders, jobs) is short-lived and short.
HISTORY_EVENTS_KEPT = 64
# The stored events kept in all, whatever their aggregates: bounds the memory (an event's stored
# form is a few kilobytes at most).
HISTORIES_EVENTS_KEPT = 16384


def eventstore_env(settings: Settings) -> dict[str, str]:
    if settings.database_url:
        url = urlparse(settings.database_url)
        opened = min(2, settings.database_pool_size)
        return {
            "PERSISTENCE_MODULE": "eventsourcing.postgres",
            "POSTGRES_DBNAME": url.path.lstrip("/") or "postgres",
            "POSTGRES_HOST": url.hostname or "127.0.0.1",
            "POSTGRES_PORT": str(url.port or 5432),
            "POSTGRES_USER": unquote(url.username or "postgres"),
            "POSTGRES_PASSWORD": unquote(url.password or ""),
            "POSTGRES_SCHEMA": settings.database_schema,
            # Two open from the start, the rest (up to three times the setting) as load needs
            # them: every role of a deployment may be its own process on one PostgreSQL,
            # whose default max_connections (100) idle pools of ten each would use up.
            "POSTGRES_POOL_SIZE": str(opened),
            "POSTGRES_MAX_OVERFLOW": str(3 * settings.database_pool_size - opened),
            "POSTGRES_LOCK_TIMEOUT": "10",
            "APPLICATION_RECORDER_TOPIC": "infra.pg_recorder:OneStatementRecorder",
        }
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return {
        "PERSISTENCE_MODULE": "eventsourcing.sqlite",
        "SQLITE_DBNAME": str(settings.data_dir / "events.sqlite"),
        "SQLITE_LOCK_TIMEOUT": "30",
        # eventsourcing's recorder, the saves of concurrent requests committed together.
        "APPLICATION_RECORDER_TOPIC": "infra.group_commit:GroupCommitSQLiteRecorder",
    }


class EventStore(Application[UUID]):
    name = APPLICATION_NAME

    def __init__(self, env: dict[str, str] | None = None) -> None:
        super().__init__(env)
        self._listeners: list[Callable[[int], None]] = []
        self._listeners_lock = threading.Lock()
        self._sqlite_path: str | None = self.env.get("SQLITE_DBNAME")
        self._probes = threading.local()
        self._probe_connections: list[sqlite3.Connection] = []
        # One connection that never writes: its `PRAGMA data_version` changes with every commit.
        self._stamp_connection: sqlite3.Connection | None = None
        self._stamp_lock = threading.Lock()
        self._versions: OrderedDict[tuple[UUID, int], Any] = OrderedDict()
        self._versions_lock = threading.Lock()
        # Whether this process keeps histories: it asks `at_version`, or `keep_histories` said so.
        self._keeping_histories = False
        # Stored events by aggregate, from its first (`remember_stored`).
        self._histories: OrderedDict[UUID, list[Notification]] = OrderedDict()
        self._history_events = 0

    def construct_mapper(self) -> Mapper[UUID]:
        # Every role decodes each order's events again (loads, read models, the outbox):
        # eventsourcing's JSON decoding was an eighth of the outbox publisher's time.
        return self.factory.mapper(
            transcoder=self.construct_transcoder(), mapper_class=DecodingMapper
        )

    def on_saved(self, listener: Callable[[int], None]) -> None:
        """Called with the last notification id after each save in this process.

        Followers in the same process wake at once instead of waiting for their next poll.
        """
        with self._listeners_lock:
            self._listeners.append(listener)

    def wake_followers(self) -> None:
        """Another process committed to the log (`infra/commit_watch.py`): wake this
        process's followers as a save here would."""
        for listener in list(self._listeners):
            listener(0)

    def save(self, *objs: Any, **kwargs: Any) -> list[Recording[UUID]]:
        recordings = super().save(*objs, **kwargs)
        if recordings:
            self.remember_stored([r.notification for r in recordings])
            last = max(r.notification.id for r in recordings)
            for listener in list(self._listeners):
                listener(last)
        return recordings

    def get(self, aggregate_id: UUID) -> Any:
        return self.repository.get(aggregate_id)

    def at_version(self, aggregate_id: UUID, version: int) -> Any:
        """The aggregate as it was at `version`, shared read-only between its readers.

        A stored version never changes, so it is rebuilt once and kept: the read models and
        the webhook mappers each ask for the same order at the same version (five times for
        one sandbox order). It is rebuilt from the stored events this process already read
        or wrote (`remember_stored`) when it has them all, else from the store. Callers must
        not mutate what they get.
        """
        key = (aggregate_id, version)
        self._keeping_histories = True
        with self._versions_lock:
            found = self._versions.get(key)
            if found is not None:
                self._versions.move_to_end(key)
                return found
            history = self._histories.get(aggregate_id)
            known = None if history is None or len(history) < version else history[:version]
        if known is not None:
            found = self._projected(known)
        else:
            found = self.repository.get(aggregate_id, version=version)
        self._keep_version(key, found)
        return found

    def built_version(self, aggregate_id: UUID, version: int) -> Any | None:
        """The aggregate at `version` if `at_version` already built it here, else None: a
        look that never rebuilds or reads (shared read-only, as `at_version`'s)."""
        with self._versions_lock:
            return self._versions.get((aggregate_id, version))

    def keep_histories(self) -> None:
        """Remember the stored events this process reads or writes from now on, for
        `rebuilt` (a process that asks `at_version` does so from its first ask)."""
        self._keeping_histories = True

    def rebuilt(self, aggregate_id: UUID) -> Any | None:
        """The aggregate built afresh (the caller may change and save it) from the stored
        events this process read or wrote of it, or None when it does not hold them all from
        the first. As of the last of them, which need not be the last stored: a save from it
        then fails on its version, as one from any stale load does."""
        with self._versions_lock:
            history = self._histories.get(aggregate_id)
            known = None if history is None else list(history)
        if not known:
            return None
        return self._projected(known)

    def _projected(self, stored_events: Sequence[Notification]) -> Any:
        """The aggregate these stored events build, each decoded afresh as the repository
        would (an aggregate may hold, and later change, the lists and dicts of its events).
        eventsourcing's project_aggregate, less its per-event isinstance check against a
        runtime Protocol: that check alone was a tenth of the outbox publisher's time."""
        found = None
        for stored in stored_events:
            event = cast(CanMutateProtocol[Any], self.mapper.to_domain_event(stored))
            found = event.mutate(found)
        return found

    def remember_stored(self, notifications: Sequence[Notification]) -> None:
        """Keep the stored form of aggregates' events, read from the log or just saved, so
        that `at_version` rebuilds them without reading them back: a follower in another
        process than the save reads every event it applies anyway. Kept only for aggregates
        seen from their first event, and only in a process that keeps histories at all."""
        if not self._keeping_histories:
            return
        with self._versions_lock:
            for notification in notifications:
                self._remember(notification)

    def _remember(self, notification: Notification) -> None:
        stored_id = notification.originator_id
        aggregate_id = stored_id if isinstance(stored_id, UUID) else UUID(stored_id)
        version = notification.originator_version
        history = self._histories.get(aggregate_id)
        if history is None:
            if version != 1:
                return
            self._histories[aggregate_id] = [notification]
        elif len(history) >= version:
            return  # another follower of this process read it first
        elif len(history) == version - 1 < HISTORY_EVENTS_KEPT:
            history.append(notification)
            self._histories.move_to_end(aggregate_id)
        else:
            del self._histories[aggregate_id]  # a gap (or too long): the store has it all
            self._history_events -= len(history)
            return
        self._history_events += 1
        while self._history_events > HISTORIES_EVENTS_KEPT:
            _, oldest = self._histories.popitem(last=False)
            self._history_events -= len(oldest)

    def _keep_version(self, key: tuple[UUID, int], aggregate: Any) -> None:
        with self._versions_lock:
            self._versions[key] = aggregate
            if len(self._versions) > VERSIONS_CACHED:
                self._versions.popitem(last=False)

    def find(self, aggregate_id: UUID | None, kind: type[Aggregate]) -> Any | None:
        """The aggregate of this kind, or None for an unknown id or another kind."""
        if aggregate_id is None:
            return None
        try:
            found: Any = self.repository.get(aggregate_id)
        except AggregateNotFoundError:
            return None
        return found if isinstance(found, kind) else None

    def has_newer_events(self, aggregate_id: UUID, version: int) -> bool:
        """Whether the aggregate has an event after `version`: one indexed read.

        Asked on every authenticated request, so on SQLite it runs on a plain autocommit
        connection: eventsourcing's pooled, explicitly begun and rolled back read costs about
        fifteen times more, which showed as a third of the gateway's time per request.
        """
        if self._sqlite_path is None:
            return bool(self.recorder.select_events(aggregate_id, gt=version, limit=1))
        rows = self._probe().execute(
            "SELECT 1 FROM stored_events WHERE originator_id = ? AND originator_version > ? "
            "LIMIT 1",
            (aggregate_id.hex, version),
        ).fetchall()
        return bool(rows)

    def latest_versions(self, aggregate_ids: Sequence[UUID]) -> dict[UUID, int]:
        """The last version of each of these aggregates, in one indexed read; an aggregate
        with no event is left out. What a request checks together (its key, its sandbox
        clock) costs one round trip instead of one each."""
        if self._sqlite_path is None:
            if isinstance(self.recorder, OneStatementRecorder):
                found: dict[UUID, int] = self.recorder.latest_versions(aggregate_ids)
                return found
            return self._latest_versions_one_by_one(aggregate_ids)
        by_hex = {aggregate_id.hex: aggregate_id for aggregate_id in aggregate_ids}
        marks = ", ".join("?" * len(by_hex))
        rows = self._probe().execute(
            "SELECT originator_id, MAX(originator_version) FROM stored_events "
            f"WHERE originator_id IN ({marks}) GROUP BY originator_id",
            tuple(by_hex),
        ).fetchall()
        return {by_hex[stored_id]: int(version) for stored_id, version in rows}

    def _latest_versions_one_by_one(self, aggregate_ids: Sequence[UUID]) -> dict[UUID, int]:
        """For a store whose recorder is eventsourcing's own (a tool opening a store)."""
        found = {}
        for aggregate_id in aggregate_ids:
            last = self.recorder.select_events(aggregate_id, desc=True, limit=1)
            if last:
                found[aggregate_id] = last[0].originator_version
        return found

    def commit_stamp(self) -> int | None:
        """A stamp of the SQLite event log: equal stamps mean no connection of any process
        committed in between. None on PostgreSQL.

        SQLite's own `PRAGMA data_version`, on a connection that never writes. (An earlier
        version mapped the `-shm` file itself; closing that file dropped the POSIX locks
        SQLite holds on it for the whole process, so another process could reset the WAL
        index under this one's readers and writers.)
        """
        if self._sqlite_path is None:
            return None
        with self._stamp_lock:
            if self._stamp_connection is None:
                self._stamp_connection = sqlite3.connect(
                    self._sqlite_path, isolation_level=None, timeout=30.0,
                    check_same_thread=False,
                )
            row = self._stamp_connection.execute("PRAGMA data_version").fetchone()
        return int(row[0])

    def _probe(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._probes, "conn", None)
        if conn is None:
            assert self._sqlite_path is not None
            conn = sqlite3.connect(
                self._sqlite_path, isolation_level=None, timeout=30.0, check_same_thread=False
            )
            self._probes.conn = conn
            with self._listeners_lock:
                self._probe_connections.append(conn)
        return conn

    def close(self) -> None:
        with self._stamp_lock:
            if self._stamp_connection is not None:
                self._stamp_connection.close()
                self._stamp_connection = None
        with self._listeners_lock:
            for conn in self._probe_connections:
                conn.close()
            self._probe_connections.clear()
        super().close()
