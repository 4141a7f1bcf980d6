"""The event store: one eventsourcing Application whose repository holds every aggregate.

Its persistence is built here, in one place, from our own settings (SQLite file by default,
PostgreSQL when a database URL is configured).
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote, urlparse
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application, project_aggregate
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import Notification, Recording

from infra.settings import Settings

APPLICATION_NAME = "partner"
# Aggregates kept by (id, version): enough for every reader to find an order the others
# just rebuilt, while a burst of orders is in flight.
VERSIONS_CACHED = 1024


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
        self._versions_read = False  # whether this process asks at_version at all

    def on_saved(self, listener: Callable[[int], None]) -> None:
        """Called with the last notification id after each save in this process.

        Followers in the same process wake at once instead of waiting for their next poll.
        """
        with self._listeners_lock:
            self._listeners.append(listener)

    def save(self, *objs: Any, **kwargs: Any) -> list[Recording[UUID]]:
        recordings = super().save(*objs, **kwargs)
        if recordings:
            if self._versions_read:
                self._remember_new_versions(recordings)
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
        one sandbox order), and each rebuild is a query and a replay. Callers must not
        mutate what they get.
        """
        key = (aggregate_id, version)
        self._versions_read = True
        with self._versions_lock:
            found = self._versions.get(key)
            if found is not None:
                self._versions.move_to_end(key)
                return found
        found = self.repository.get(aggregate_id, version=version)
        self._keep_version(key, found)
        return found

    def _keep_version(self, key: tuple[UUID, int], aggregate: Any) -> None:
        with self._versions_lock:
            self._versions[key] = aggregate
            if len(self._versions) > VERSIONS_CACHED:
                self._versions.popitem(last=False)

    def _remember_new_versions(self, recordings: list[Recording[UUID]]) -> None:
        """Every version of an aggregate this save created, for `at_version` readers in this
        process (the read models and the outbox ask for each one next), built as the
        repository would build them: from the stored form of its events, decoded afresh."""
        stored: dict[UUID, list[Notification]] = {}
        for recording in recordings:
            stored.setdefault(recording.domain_event.originator_id, []).append(
                recording.notification
            )
        for aggregate_id, notifications in stored.items():
            if notifications[0].originator_version != 1:
                continue  # the versions before this save are not at hand
            for count in range(1, len(notifications) + 1):
                events = [self.mapper.to_domain_event(n) for n in notifications[:count]]
                self._keep_version((aggregate_id, count), project_aggregate(None, events))

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
