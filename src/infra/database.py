"""A small SQL layer for read models, idempotency records, rate buckets and tracking.

The event store itself belongs to `eventsourcing`; this is the other half of CQRS storage.
Statements are written with `?` placeholders and run unchanged on SQLite and PostgreSQL.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from infra.wal_checkpoints import JOURNAL_SIZE_LIMIT_BYTES

Row = dict[str, Any]


class Cursor(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor: ...
    def fetchone(self) -> Row | None: ...
    def fetchall(self) -> list[Row]: ...
    @property
    def rowcount(self) -> int: ...


class Database(Protocol):
    dialect: str

    def transaction(self) -> Any:
        """Context manager yielding a Cursor; commits on success, rolls back on error."""
        ...

    def bulk_transaction(self) -> Any:
        """As `transaction`, for many small writes (PostgreSQL pipeline mode): statements go out
        without waiting for their results; a fetch or `rowcount` first waits for every result
        so far, so reading one back costs a round trip."""
        ...

    def read(self) -> Any:
        """Context manager yielding a Cursor for reads (no write lock taken)."""
        ...

    def snapshot(self) -> Any:
        """As `read`, but every statement through the cursor sees one moment of the database,
        whatever commits meanwhile."""
        ...

    def statement(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """One statement in a transaction of its own, returning its rows (RETURNING)."""
        ...

    def relaxed(self) -> Database:
        """The same tables, for writes that need not wait for their own flush to disk: state
        rebuilt from the event log, or (PostgreSQL, one WAL for everything) made durable by
        the event store's next commit."""
        ...

    def durable(self) -> Database:
        """The same tables, for writes whose commit must wait for the disk."""
        ...

    def close(self) -> None: ...


def _dict_factory(cursor: sqlite3.Cursor, row: tuple[Any, ...]) -> Row:
    return {col[0]: row[i] for i, col in enumerate(cursor.description)}


class SQLiteDatabase:
    dialect = "sqlite"

    def __init__(
        self, path: Path, durable: bool = True, journal_mode: str = "WAL", synchronous: str = ""
    ) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        # NORMAL: in WAL mode a commit survives a crash of the process but not of the machine,
        # and the file is never corrupted. Non-durable files skip fsync entirely.
        self._synchronous = synchronous or ("NORMAL" if durable else "OFF")
        self._durable: SQLiteDatabase | None = None
        self._durable_lock = threading.Lock()
        self._journal_mode = journal_mode
        self._local = threading.local()
        # OFF only suits throwaway files: a failed transaction cannot be rolled back.
        self._connection().execute(f"PRAGMA journal_mode={journal_mode}").fetchall()

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self.path, isolation_level=None, timeout=30.0, check_same_thread=False
            )
            conn.row_factory = _dict_factory
            conn.execute(f"PRAGMA synchronous={self._synchronous}")
            conn.execute("PRAGMA busy_timeout=30000")
            # A WAL this connection resets is cut back to this size (infra/wal_checkpoints.py).
            conn.execute(f"PRAGMA journal_size_limit={JOURNAL_SIZE_LIMIT_BYTES}")
            self._local.conn = conn
        return conn

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        conn = self._connection()
        cur = conn.cursor()
        # IMMEDIATE takes the write lock up front, so two writers never deadlock on upgrade.
        cur.execute("BEGIN IMMEDIATE")
        try:
            yield cur
        except BaseException:
            conn.rollback()
            raise
        else:
            conn.commit()
        finally:
            cur.close()

    def bulk_transaction(self) -> Any:
        return self.transaction()

    def relaxed(self) -> SQLiteDatabase:
        # In WAL mode with synchronous=NORMAL a commit already skips fsync.
        return self

    def durable(self) -> SQLiteDatabase:
        """Connections of their own whose commits fsync the WAL (synchronous=FULL)."""
        with self._durable_lock:
            if self._durable is None:
                self._durable = SQLiteDatabase(
                    self.path, journal_mode=self._journal_mode, synchronous="FULL"
                )
            return self._durable

    def statement(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        # In autocommit mode one write statement is its own transaction and takes the write
        # lock when it starts (waiting on busy_timeout), as BEGIN IMMEDIATE would, without the
        # two extra round trips of BEGIN and COMMIT.
        return self._connection().execute(sql, tuple(params)).fetchall()

    @contextmanager
    def read(self) -> Iterator[Any]:
        cur = self._connection().cursor()
        try:
            yield cur
        finally:
            cur.close()

    @contextmanager
    def snapshot(self) -> Iterator[Any]:
        # In WAL mode a read transaction sees the database as of its first read until it ends.
        conn = sqlite3.connect(self.path, isolation_level=None, timeout=30.0)
        conn.row_factory = _dict_factory
        try:
            cur = conn.cursor()
            cur.execute("BEGIN")
            cur.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()  # starts the snapshot
            yield cur
        finally:
            conn.close()

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
        if self._durable is not None:
            self._durable.close()


class _PgCursor:
    """psycopg cursor that accepts `?` placeholders."""

    def __init__(self, cursor: psycopg.Cursor[Row]) -> None:
        self._cursor = cursor

    def execute(self, sql: str, params: Sequence[Any] = ()) -> _PgCursor:
        self._cursor.execute(sql.replace("?", "%s"), tuple(params))
        return self

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self._cursor.executemany(sql.replace("?", "%s"), [tuple(row) for row in rows])

    def fetchone(self) -> Row | None:
        return self._cursor.fetchone()

    def fetchall(self) -> list[Row]:
        return self._cursor.fetchall()

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount


class _ReadCursor(_PgCursor):
    """A read's cursor (autocommit: each statement stands alone) that runs a statement again
    on a fresh connection when the pooled one turns out dead: a PostgreSQL restart or an
    administrator's terminate leaves idle pooled connections that fail on their next use,
    and a read may simply be asked again."""

    def __init__(self, pool: ConnectionPool[psycopg.Connection[Row]]) -> None:
        self._pool = pool
        self._conn = pool.getconn()
        super().__init__(self._conn.cursor())

    def execute(self, sql: str, params: Sequence[Any] = ()) -> _PgCursor:
        try:
            return super().execute(sql, params)
        except psycopg.OperationalError:
            if not self._conn.broken:
                raise
            self._pool.putconn(self._conn)  # the pool discards a broken connection
            self._conn = self._pool.getconn()
            self._cursor = self._conn.cursor()
            return super().execute(sql, params)

    def close(self) -> None:
        self._cursor.close()
        self._pool.putconn(self._conn)


class _PipelineCursor(_PgCursor):
    """In pipeline mode results arrive after later statements were sent, and psycopg hands an
    earlier statement's late result to a fetch of the same cursor as if it were the current
    one's ("the last operation didn't produce records"). A sync first processes every result
    in order, so the cursor holds its last statement's: the fetch waited for it anyway."""

    def __init__(self, cursor: psycopg.Cursor[Row], pipeline: psycopg.Pipeline) -> None:
        super().__init__(cursor)
        self._pipeline = pipeline

    def fetchone(self) -> Row | None:
        self._pipeline.sync()
        return super().fetchone()

    def fetchall(self) -> list[Row]:
        self._pipeline.sync()
        return super().fetchall()

    @property
    def rowcount(self) -> int:
        self._pipeline.sync()
        return self._cursor.rowcount


class PostgresDatabase:
    dialect = "postgres"

    def __init__(
        self, url: str, schema: str = "public", max_size: int = 10, synchronous: bool = True
    ) -> None:
        self.url = url
        self.schema = schema
        self._relaxed: PostgresDatabase | None = None if synchronous else self
        # libpq lets these options replace the URL's own `options`: keep those, then ours.
        options = " ".join(
            [*parse_qs(urlsplit(url).query).get("options", []), f"-c search_path={schema}"]
        )
        if synchronous:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        else:
            options += " -c synchronous_commit=off"
        self._pool: ConnectionPool[psycopg.Connection[Row]] = ConnectionPool(
            url,
            min_size=1,
            max_size=max_size,
            # Autocommit: a read or a single statement is one round trip. Without it psycopg
            # sends BEGIN before the first statement and the pool a ROLLBACK on return, which
            # made every read three round trips. `transaction()` still opens a real one.
            kwargs={"options": options, "row_factory": dict_row, "autocommit": True},
            open=True,
        )

    def relaxed(self) -> PostgresDatabase:
        """A pool of its own whose commits return before their WAL flush
        (`synchronous_commit = off`). PostgreSQL writes WAL in order and a durable commit
        flushes everything before it, so a crash can only lose a tail of such commits, never
        one a later durable commit saw."""
        if self._relaxed is None:
            self._relaxed = PostgresDatabase(self.url, self.schema, 5, synchronous=False)
        return self._relaxed

    def durable(self) -> PostgresDatabase:
        if self._relaxed is self:
            raise RuntimeError("a relaxed pool's commits never wait for the disk")
        return self

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        with self._pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
            yield _PgCursor(cur)

    @contextmanager
    def bulk_transaction(self) -> Iterator[Any]:
        # Pipeline mode sends statements without waiting for each reply (a fetch still waits
        # for its own): a replay of many small writes otherwise pays one round trip per row.
        with (
            self._pool.connection() as conn,
            conn.pipeline() as pipeline,
            conn.transaction(),
            conn.cursor() as cur,
        ):
            yield _PipelineCursor(cur, pipeline)

    def statement(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        # One statement is atomic on its own: in autocommit it commits as it returns.
        with self._pool.connection() as conn, conn.cursor() as cur:
            cur.execute(sql.replace("?", "%s"), tuple(params))
            return cur.fetchall() if cur.description is not None else []

    @contextmanager
    def read(self) -> Iterator[Any]:
        cursor = _ReadCursor(self._pool)
        try:
            yield cursor
        finally:
            cursor.close()

    @contextmanager
    def snapshot(self) -> Iterator[Any]:
        with self._pool.connection() as conn:
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            try:
                with conn.cursor() as cur:
                    yield _PgCursor(cur)
            finally:
                # A broken connection cannot roll back; the pool discards it, and the error
                # that broke it is the one to see.
                with suppress(psycopg.Error):
                    conn.execute("ROLLBACK")

    def close(self) -> None:
        if self._relaxed is not None and self._relaxed is not self:
            self._relaxed.close()
        self._pool.close()


_CREATES = re.compile(r"^CREATE (?:UNIQUE )?(?:TABLE|INDEX) IF NOT EXISTS (\w+)", re.IGNORECASE)


def create_if_missing(cur: Cursor, statement: str) -> None:
    """Run a `CREATE ... IF NOT EXISTS` only when its table or index is missing. On PostgreSQL
    the statement itself locks the table (CREATE INDEX takes a SHARE lock even when the index
    exists), so a process starting beside running ones could deadlock with their writes."""
    created = _CREATES.match(statement.strip())
    if created is not None and _relation_exists(cur, created.group(1)):
        return
    cur.execute(statement)


def _relation_exists(cur: Cursor, name: str) -> bool:
    if isinstance(cur, _PgCursor):
        sql = (
            "SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = current_schema() AND c.relname = ?"
        )
    else:
        sql = "SELECT 1 FROM sqlite_master WHERE name = ?"
    return cur.execute(sql, (name,)).fetchone() is not None


def least(dialect: str) -> str:
    return "MIN" if dialect == "sqlite" else "LEAST"


def greatest(dialect: str) -> str:
    return "MAX" if dialect == "sqlite" else "GREATEST"
