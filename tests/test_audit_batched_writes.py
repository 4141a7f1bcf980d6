"""`audit replay` holds writes back per table: reads still see every earlier write, and each
table's writes keep their order."""

from __future__ import annotations

from pathlib import Path

import pytest

from audit.batched_writes import BatchedWrites
from infra.database import SQLiteDatabase


@pytest.fixture
def db(tmp_path: Path) -> SQLiteDatabase:
    database = SQLiteDatabase(tmp_path / "scratch.sqlite", durable=False, journal_mode="OFF")
    with database.transaction() as cur:
        cur.execute("CREATE TABLE a (id TEXT PRIMARY KEY, n INTEGER NOT NULL)")
        cur.execute("CREATE TABLE b (id TEXT PRIMARY KEY, n INTEGER NOT NULL)")
    return database


def test_a_read_sees_the_queued_writes_of_the_table_it_names(db: SQLiteDatabase) -> None:
    with db.transaction() as cur:
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


def test_each_tables_writes_keep_their_order(db: SQLiteDatabase) -> None:
    with db.transaction() as cur:
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


def test_a_write_reading_another_table_runs_after_that_tables_writes(db: SQLiteDatabase) -> None:
    with db.transaction() as cur:
        writes = BatchedWrites(cur)
        writes.execute("INSERT INTO b (id, n) VALUES (?, ?)", ("y", 5))
        writes.execute("INSERT INTO a (id, n) SELECT id, n FROM b")
        writes.flush()
        with pytest.raises(TypeError):
            _ = writes.rowcount
    with db.read() as cur:
        assert cur.execute("SELECT id, n FROM a").fetchall() == [{"id": "y", "n": 5}]
