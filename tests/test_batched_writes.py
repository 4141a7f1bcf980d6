"""Read-model writes held back per table (the live read models and `audit replay`): reads
still see every earlier write, each table's writes keep their order, and runs of inserts go
out as statements of many rows."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from infra.database import Database, PostgresDatabase, SQLiteDatabase
from infra.settings import Settings
from projections.batched_writes import BatchedWrites


@pytest.fixture
def db(settings: Settings, tmp_path: Path) -> Iterator[Database]:
    database: Database
    if settings.database_url:
        database = PostgresDatabase(settings.database_url, settings.database_schema)
    else:
        database = SQLiteDatabase(tmp_path / "scratch.sqlite", durable=False, journal_mode="OFF")
    with database.transaction() as cur:
        cur.execute("CREATE TABLE a (id TEXT PRIMARY KEY, n INTEGER NOT NULL)")
        cur.execute("CREATE TABLE b (id TEXT PRIMARY KEY, n INTEGER NOT NULL)")
    yield database
    database.close()


def test_a_read_sees_the_queued_writes_of_the_table_it_names(db: Database) -> None:
    with db.bulk_transaction() as cur:
        writes = BatchedWrites(cur)
        for i in range(3):
            writes.execute("INSERT INTO a (id, n) VALUES (?, ?)", (f"a{i}", i))
            writes.execute("INSERT INTO b (id, n) VALUES (?, ?)", (f"b{i}", i))
        writes.execute("UPDATE a SET n = ? WHERE id = ?", (10, "a1"))
        row = writes.execute("SELECT SUM(n) AS total FROM a").fetchone()
        assert row is not None and row["total"] == 0 + 10 + 2
        writes.flush()
    with db.read() as cur:
        assert cur.execute("SELECT COUNT(*) AS rows FROM b").fetchone()["rows"] == 3


def test_each_tables_writes_keep_their_order(db: Database) -> None:
    with db.bulk_transaction() as cur:
        writes = BatchedWrites(cur)
        writes.execute("INSERT INTO a (id, n) VALUES (?, ?)", ("x", 1))
        writes.execute("UPDATE a SET n = ? WHERE id = ?", (2, "x"))
        writes.execute("INSERT INTO b (id, n) VALUES (?, ?)", ("y", 1))
        writes.execute("UPDATE a SET n = n * 10 WHERE id = ?", ("x",))
        writes.execute(
            "INSERT INTO a (id, n) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET n = a.n + 1",
            ("x", 0),
        )
        writes.flush()
    with db.read() as cur:
        assert cur.execute("SELECT n FROM a WHERE id = 'x'").fetchone() == {"n": 21}


def test_a_write_reading_another_table_runs_after_that_tables_writes(db: Database) -> None:
    with db.bulk_transaction() as cur:
        writes = BatchedWrites(cur)
        writes.execute("INSERT INTO b (id, n) VALUES (?, ?)", ("y", 5))
        writes.execute("INSERT INTO a (id, n) SELECT id, n FROM b")
        writes.flush()
        with pytest.raises(TypeError):
            _ = writes.rowcount
    with db.read() as cur:
        assert cur.execute("SELECT id, n FROM a").fetchall() == [{"id": "y", "n": 5}]


def test_a_run_of_inserts_that_never_update_goes_out_as_statements_of_many_rows(
    db: Database,
) -> None:
    sent: list[tuple[str, int]] = []

    class Counting:
        def __init__(self, cur: Any) -> None:
            self.cur = cur

        def execute(self, sql: str, params: Any = ()) -> Any:
            sent.append((sql, len(params)))
            return self.cur.execute(sql, params)

        def executemany(self, sql: str, rows: Any) -> Any:
            rows = list(rows)
            sent.append((sql, -len(rows)))
            return self.cur.executemany(sql, rows)

    with db.bulk_transaction() as cur:
        writes = BatchedWrites(Counting(cur))
        for i in range(13):
            writes.execute(
                "INSERT INTO a (id, n) VALUES (?, ?) ON CONFLICT (id) DO NOTHING", (f"a{i}", i)
            )
        writes.execute("INSERT INTO a (id, n) VALUES (?, ?) ON CONFLICT (id) DO NOTHING", ("a0", 99))
        for i in range(3):
            writes.execute(
                "INSERT INTO b (id, n) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET n = b.n + 1",
                ("same", i),
            )
        writes.flush()
    # 14 rows: one of 8, three of 2; the upserts of one row go out one execution each.
    assert [params for sql, params in sent if " a " in sql] == [16, 4, 4, 4]
    assert [params for sql, params in sent if " b " in sql] == [-3]
    with db.read() as cur:
        rows = cur.execute("SELECT id, n FROM a ORDER BY n").fetchall()
        assert len(rows) == 13 and rows[0] == {"id": "a0", "n": 0}  # the first insert kept
        assert cur.execute("SELECT n FROM b").fetchone() == {"n": 2}


def test_a_duplicate_in_a_merged_plain_insert_still_fails(db: Database) -> None:
    with pytest.raises((sqlite3.IntegrityError, psycopg.errors.UniqueViolation)), db.bulk_transaction() as cur:
        writes = BatchedWrites(cur)
        writes.execute("INSERT INTO a (id, n) VALUES (?, ?)", ("x", 1))
        writes.execute("INSERT INTO a (id, n) VALUES (?, ?)", ("x", 2))
        writes.flush()
    with db.read() as cur:
        assert cur.execute("SELECT COUNT(*) AS rows FROM a").fetchone()["rows"] == 0
