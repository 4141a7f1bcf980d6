"""The notification log as a replay reads it: batches of rows with a notification's fields
(`id`, `topic`, `originator_id`, `originator_version`, `state`).

eventsourcing's `select_notifications` builds a frozen `Notification` per row (on PostgreSQL
from a dict per row), most of the cost of reading, and the reading thread holds the GIL the
replay needs meanwhile. For its own recorders' tables, the same query runs here into named
tuples; originator ids stay as stored (text on SQLite, converted by the decoder as
`Mapper.to_domain_event` converts text ids). Any other recorder, and a PostgreSQL read that
fails, go through `select_notifications` (which retries).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

from eventsourcing.postgres import PostgresApplicationRecorder
from eventsourcing.sqlite import SQLiteApplicationRecorder
from psycopg import InterfaceError, OperationalError
from psycopg.rows import tuple_row
from psycopg.sql import SQL, Identifier

from audit.records import read_notifications
from infra.store import EventStore

Batch = Callable[[int, int, int], Sequence[Any]]  # (after, stop, limit) -> rows


class StoredRow(NamedTuple):
    id: int
    topic: str
    originator_id: Any  # text on SQLite, a UUID on PostgreSQL
    originator_version: int
    state: bytes


def read_rows(
    store: EventStore, after: int, stop: int, batch: int, topics: Sequence[str] | None = None
) -> Iterator[Sequence[Any]]:
    """Notifications after `after` up to `stop` (inclusive), oldest first, `batch` at most
    per read; only those of `topics` when given (and the store's SQL is ours to write)."""
    recorder = store.recorder
    if type(recorder) is SQLiteApplicationRecorder:
        select = _sqlite_batches(recorder, topics)
    elif type(recorder) is PostgresApplicationRecorder:
        select = _postgres_batches(recorder, topics)
    else:
        yield from read_notifications(store, after, stop=stop, batch=batch)
        return
    if topics is not None and not topics:
        return
    position = after
    while position < stop:
        rows = select(position, stop, batch)
        if not rows:
            return
        yield rows
        position = rows[-1].id


def stored_topics(store: EventStore, stop: int) -> list[str] | None:
    """The topics of the notifications up to `stop`, or None where the store's SQL is not
    ours to write."""
    rows = _up_to(store, "SELECT DISTINCT topic FROM {table} WHERE {id}<=?", stop)
    return None if rows is None else [row[0] for row in rows]


def count_rows(store: EventStore, stop: int) -> int | None:
    """How many notifications there are up to `stop`, or None as `stored_topics`."""
    rows = _up_to(store, "SELECT COUNT(*) FROM {table} WHERE {id}<=?", stop)
    return None if rows is None else int(rows[0][0])


def _up_to(store: EventStore, query: str, stop: int) -> list[tuple[Any, ...]] | None:
    """`query` over the events table ({table}, notification id column {id}) with `stop` as
    its one parameter, as tuples; None for a recorder of another kind."""
    recorder = store.recorder
    if type(recorder) is SQLiteApplicationRecorder:
        with recorder.datastore.transaction(commit=False) as cur:
            cur.execute(query.format(table=recorder.events_table_name, id="rowid"), (stop,))
            return [tuple(row) for row in cur.fetchall()]
    if type(recorder) is PostgresApplicationRecorder:
        statement = SQL(query.replace("?", "%s").replace("{table}", "{schema}.{table}")).format(
            id=Identifier("notification_id"), **_names(recorder)
        )
        with recorder.datastore.get_connection() as conn, conn.cursor(row_factory=tuple_row) as cur:
            cur.execute(statement, (stop,))
            return cur.fetchall()
    return None


def _names(recorder: PostgresApplicationRecorder) -> dict[str, Identifier]:
    return {
        "schema": Identifier(recorder.datastore.schema),
        "table": Identifier(recorder.events_table_name),
    }


def _sqlite_batches(recorder: SQLiteApplicationRecorder, topics: Sequence[str] | None) -> Batch:
    # The recorder's notification query (rowid is the notification id), fewer columns.
    only = f" AND topic IN ({', '.join('?' * len(topics))})" if topics else ""
    sql = (
        "SELECT rowid, topic, originator_id, originator_version, state "
        f"FROM {recorder.events_table_name} WHERE rowid>? AND rowid<=?{only} "
        "ORDER BY rowid LIMIT ?"
    )
    chosen = tuple(topics or ())
    make = StoredRow._make

    def select(after: int, stop: int, limit: int) -> Sequence[Any]:
        with recorder.datastore.transaction(commit=False) as cur:
            cur.execute(sql, (after, stop, *chosen, limit))
            return [make(row) for row in cur.fetchall()]

    return select


def _postgres_batches(
    recorder: PostgresApplicationRecorder, topics: Sequence[str] | None
) -> Batch:
    only = " AND topic = ANY(%s)" if topics else ""
    statement = SQL(
        "SELECT notification_id, topic, originator_id, originator_version, state "
        "FROM {schema}.{table} WHERE notification_id>%s AND notification_id<=%s" + only + " "
        "ORDER BY notification_id LIMIT %s"
    ).format(**_names(recorder))
    chosen = (list(topics),) if topics else ()

    def select(after: int, stop: int, limit: int) -> Sequence[Any]:
        try:
            with (
                recorder.datastore.get_connection() as conn,
                conn.cursor(row_factory=tuple_row) as curs,
            ):
                curs.execute(statement, (after, stop, *chosen, limit), prepare=True)
                rows = curs.fetchall()
        except (InterfaceError, OperationalError):
            retried: Sequence[Any] = recorder.select_notifications(
                start=after + 1, limit=limit, stop=stop, topics=topics or ()
            )
            return retried
        return [
            StoredRow(at, topic, originator, version, data if type(data) is bytes else bytes(data))
            for at, topic, originator, version, data in rows
        ]

    return select
