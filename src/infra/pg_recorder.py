"""The PostgreSQL event recorder: eventsourcing's, with each save one statement.

eventsourcing's recorder takes an EXCLUSIVE lock on the events table (so that notification ids
commit in the order they were issued, and no follower skips a gap that fills later), then
inserts, then waits for the reply before it sends COMMIT: the lock is held across a client
round trip. In a busy process the thread holding it also waits for the GIL between the two,
and every other save queues behind it: under load a save took 25 ms against 1.6 ms alone.

Here the lock, the insert and the commit run in the server, in one call of a function, in
autocommit: the lock is held only while PostgreSQL inserts and commits. The ordering guarantee
is the same (the same lock, taken before any id is issued, released at commit).

The saves of concurrent requests share that one statement and its commit (`group_commit.py`):
one WAL flush for all of them, where each waited for its own.

Reads are eventsourcing's statements, rendered to bytes once per shape: eventsourcing composes
them from `psycopg.sql` pieces on every call, which cost as much client time as the round trip
of the read itself, and an order is read this way about ten times (loads, version checks,
followers' batches).
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from typing import Any
from uuid import UUID

from eventsourcing.persistence import (
    IntegrityError,
    InterfaceError,
    Notification,
    OperationalError,
    StoredEvent,
)
from eventsourcing.postgres import PostgresApplicationRecorder, PostgresDatastore
from eventsourcing.utils import retry
from psycopg.sql import SQL, Composed, Identifier

from infra.group_commit import GroupCommit, Pending

INSERT_ATTEMPTS = 10  # eventsourcing's own recorder: 10 attempts, 0.2 s apart
RETRY_WAIT_SECONDS = 0.2


class OneStatementRecorder(PostgresApplicationRecorder):
    def __init__(
        self, datastore: PostgresDatastore, *, events_table_name: str = "stored_events"
    ) -> None:
        super().__init__(datastore, events_table_name=events_table_name)
        # Named after the table: eventsourcing's own function is one per schema, whichever
        # table was created last in it.
        self.insert_function = f"{self.events_table_name}_insert_in_order"
        schema = Identifier(self.datastore.schema)
        function = Identifier(self.insert_function)
        table = Identifier(self.events_table_name)
        self.sql_create_statements[self.create_insert_function_statement_index] = SQL(
            "CREATE OR REPLACE FUNCTION {schema}.{function}(events {schema}.{event}[]) "
            "RETURNS SETOF bigint LANGUAGE plpgsql AS $BODY$ "
            "BEGIN "
            "  SET LOCAL lock_timeout = '{lock_timeout}s'; "
            "  LOCK TABLE {schema}.{table} IN EXCLUSIVE MODE; "
            "  NOTIFY {channel}; "
            "  RETURN QUERY INSERT INTO {schema}.{table} AS t "
            "    (originator_id, originator_version, topic, state) "
            "    SELECT originator_id, originator_version, topic, state FROM unnest(events) "
            "    RETURNING notification_id; "
            "END; $BODY$"
        ).format(
            schema=schema,
            function=function,
            table=table,
            event=Identifier(self.stored_event_type_name),
            lock_timeout=self.datastore.lock_timeout,
            channel=Identifier(self.channel_name),
        )
        self._call_insert = SQL("SELECT * FROM {schema}.{function}((%s))").format(
            schema=schema, function=function
        )
        self._group: GroupCommit[Sequence[StoredEvent], Sequence[int]] = GroupCommit(
            self._write_batch
        )
        self._rendered: dict[tuple[object, ...], bytes] = {}
        self._select_one = SQL(
            "SELECT notification_id, topic, state FROM {schema}.{table} "
            "WHERE originator_id = %s AND originator_version = %s"
        ).format(schema=schema, table=table)

    def insert_events(
        self, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        """Saves of concurrent requests go in one statement, one commit (group commit)."""
        if not stored_events:
            return []
        return self._group.submit(stored_events)

    def _write_batch(self, batch: Sequence[Pending[Sequence[StoredEvent], Sequence[int]]]
                     ) -> None:
        """One call inserts every save of the batch. If it fails, each save runs on its own,
        so a conflict fails only its save; after a dropped connection each first looks for
        its events, since the batch may have committed before the answer was lost."""
        if len(batch) == 1:
            self._settle_alone(batch[0], first_attempt=1)
            return
        rows = [self._row(e) for pending in batch for e in pending.item]
        try:
            with self.datastore.get_connection() as conn, conn.cursor() as cursor:
                ids = sorted(self._insert(cursor, rows))  # issued in row order, under the lock
        except IntegrityError:
            for pending in batch:
                self._settle_alone(pending, first_attempt=1)
            return
        except (InterfaceError, OperationalError):
            for pending in batch:
                self._settle_alone(pending, first_attempt=2)
            return
        for pending in batch:
            count = len(pending.item)
            pending.settle(ids[:count])
            ids = ids[count:]

    def _settle_alone(self, pending: Pending[Sequence[StoredEvent], Sequence[int]],
                      first_attempt: int) -> None:
        try:
            pending.settle(self._insert_alone(pending.item, first_attempt))
        except Exception as error:  # noqa: BLE001 - the save's own caller gets it
            pending.settle(error=error)

    def _row(self, e: StoredEvent) -> Any:
        return self.construct_pg_stored_event(
            e.originator_id, e.originator_version, e.topic, e.state
        )

    def _insert_alone(self, stored_events: Sequence[StoredEvent], first_attempt: int
                      ) -> list[int]:
        """As eventsourcing's own, a dropped connection (a PostgreSQL restart) is retried.

        Unlike it, a retry first looks for the events: when the connection drops after the
        server committed but before its answer arrived, inserting again would meet our own
        rows as a conflict, and the caller would decide afresh on state that already holds
        its first decision (a wallet credited twice)."""
        rows = [self._row(e) for e in stored_events]
        for attempt in range(first_attempt, INSERT_ATTEMPTS + 1):
            try:
                if attempt > 1 and (stored := self._already_stored(stored_events)) is not None:
                    return stored
                with self.datastore.get_connection() as conn, conn.cursor() as cursor:
                    return self._insert(cursor, rows)
            except IntegrityError:
                # The first attempt may have been still committing when the lookup ran: its
                # lock made this insert wait until the commit, so its events are there now.
                if attempt > 1 and (stored := self._already_stored(stored_events)) is not None:
                    return stored
                raise
            except (InterfaceError, OperationalError):
                if attempt == INSERT_ATTEMPTS:
                    raise
                time.sleep(RETRY_WAIT_SECONDS * (1 + 0.1 * (random.random() - 0.5)))
        raise AssertionError("unreachable")

    def _insert(self, cursor: Any, rows: list[Any]) -> list[int]:
        statement = self._render(cursor.connection, ("insert",), lambda: self._call_insert)
        cursor.execute(statement, (rows,), prepare=True)
        return [row[self.insert_function] for row in cursor.fetchall()]

    def _already_stored(self, stored_events: Sequence[StoredEvent]) -> list[int] | None:
        """The notification ids of exactly these events, if an earlier attempt stored them all;
        None if any is missing or differs (then the insert decides: stored, or a conflict)."""
        ids: list[int] = []
        with self.datastore.get_connection() as conn, conn.cursor() as cursor:
            for event in stored_events:
                cursor.execute(self._select_one, (event.originator_id, event.originator_version))
                row = cursor.fetchone()
                if row is None or row["topic"] != event.topic or bytes(row["state"]) != event.state:
                    return None
                ids.append(int(row["notification_id"]))
        return ids

    def _render(self, conn: Any, shape: tuple[object, ...], build: Any) -> bytes:
        """The statement of this shape as bytes, composed the first time it is asked for."""
        found = self._rendered.get(shape)
        if found is None:
            composed: Composed = build()
            found = self._rendered[shape] = composed.as_bytes(conn)
        return found

    def _fetch(self, shape: tuple[object, ...], build: Any, params: list[Any]) -> list[Any]:
        """The rows of the statement of this shape (`build` composes it the first time)."""
        with self.datastore.get_connection() as conn, conn.cursor() as curs:
            curs.execute(self._render(conn, shape, build), params, prepare=True)
            return curs.fetchall()

    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)
    def select_events(
        self,
        originator_id: Any,
        *,
        gt: int | None = None,
        lte: int | None = None,
        desc: bool = False,
        limit: int | None = None,
    ) -> Sequence[StoredEvent]:
        params: list[Any] = [originator_id]
        params += [value for value in (gt, lte, limit) if value is not None]
        shape = ("events", gt is not None, lte is not None, desc, limit is not None)

        def build() -> Composed:
            statement: Composed = self.select_events_statement + SQL("")
            if gt is not None:
                statement += SQL(" AND originator_version > %s")
            if lte is not None:
                statement += SQL(" AND originator_version <= %s")
            statement += SQL(" ORDER BY originator_version DESC" if desc else
                             " ORDER BY originator_version ASC")
            if limit is not None:
                statement += SQL(" LIMIT %s")
            return statement

        return [
            StoredEvent(
                originator_id=row["originator_id"],
                originator_version=row["originator_version"],
                topic=row["topic"],
                state=bytes(row["state"]),
            )
            for row in self._fetch(shape, build, params)
        ]

    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)
    def latest_versions(self, originator_ids: Sequence[UUID]) -> dict[UUID, int]:
        """The last stored version of each of these aggregates (none stored: left out), in one
        read: each a backward step of the primary key's index."""

        def build() -> Composed:
            return SQL(
                "SELECT id, (SELECT max(originator_version) FROM {schema}.{table} "
                "WHERE originator_id = id) AS version FROM unnest(%s::uuid[]) AS id"
            ).format(
                schema=Identifier(self.datastore.schema),
                table=Identifier(self.events_table_name),
            )

        rows = self._fetch(("latest",), build, [list(originator_ids)])
        return {row["id"]: row["version"] for row in rows if row["version"] is not None}

    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)
    def select_notifications(
        self,
        start: int | None,
        limit: int,
        stop: int | None = None,
        topics: Sequence[str] = (),
        *,
        inclusive_of_start: bool = True,
    ) -> Sequence[Notification]:
        params: list[Any] = [value for value in (start, stop) if value is not None]
        if topics:
            params.append(list(topics))
        params.append(limit)
        shape = ("log", start is not None, inclusive_of_start, stop is not None, bool(topics))

        def build() -> Composed:
            conditions = []
            if start is not None:
                conditions.append("notification_id>=%s" if inclusive_of_start
                                  else "notification_id>%s")
            if stop is not None:
                conditions.append("notification_id <= %s")
            if topics:
                conditions.append("topic = ANY(%s)")
            where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
            return SQL("SELECT * FROM {schema}.{table}" + where
                       + " ORDER BY notification_id LIMIT %s").format(
                schema=Identifier(self.datastore.schema),
                table=Identifier(self.events_table_name),
            )

        return [
            Notification(
                id=row["notification_id"],
                originator_id=row["originator_id"],
                originator_version=row["originator_version"],
                topic=row["topic"],
                state=bytes(row["state"]),
            )
            for row in self._fetch(shape, build, params)
        ]
