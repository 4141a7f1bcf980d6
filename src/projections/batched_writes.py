"""A cursor that holds a batch's read-model writes back and sends them together.

Read-model handlers write one row per statement, and each statement costs the client and the
server far more than the row it carries: the live read models apply a few notifications per
batch, an audit replay hundreds of thousands. Plain `INSERT`/`UPDATE` statements are queued
per table, in order, and consecutive ones with the same SQL go out together: inserts that
cannot update a row (`VALUES` only, at most `ON CONFLICT ... DO NOTHING`) as one statement of
many rows, the others with `executemany`. Writes to different tables commute (read-model
tables have no triggers, views or foreign keys), so only each table's own order is kept.
Anything else (a read, a statement naming a second table, `RETURNING`) runs at once, after the
queued writes of every table its text names, so a handler always reads what the handlers
before it wrote.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

_QUEUEABLE = re.compile(r"\s*(?:INSERT\s+INTO|UPDATE)\s+(\w+)\s", re.IGNORECASE)
# SELECT or FROM may read another table (INSERT ... SELECT, UPDATE ... FROM).
_NOT_QUEUEABLE = re.compile(r"\b(?:SELECT|FROM|RETURNING)\b", re.IGNORECASE)
_WORD = re.compile(r"\w+")
# An insert of one row of placeholders that never updates: rows of a run of them can share a
# statement. A duplicate key in it does what it did one statement at a time: `DO NOTHING`
# keeps the first row, a plain insert fails. (`DO UPDATE` cannot touch a row twice in one
# statement, so it stays one row per execution.)
_MERGEABLE = re.compile(
    r"(?P<head>\s*INSERT\s+INTO\s+\w+\s*\([^)]*\)\s*VALUES\s*)(?P<row>\([?,\s]*\))"
    r"(?P<tail>\s*(?:ON\s+CONFLICT\s*(?:\([^)]*\))?\s*DO\s+NOTHING)?\s*)",
    re.IGNORECASE,
)
# Rows per merged statement, largest first: a few statement shapes, each prepared once.
_CHUNKS = (32, 8, 2)


@lru_cache(maxsize=1024)
def _plan(sql: str) -> tuple[str | None, frozenset[str]]:
    """The table a queueable statement writes, else None and every word of the statement."""
    target = _QUEUEABLE.match(sql)
    if target is not None and _NOT_QUEUEABLE.search(sql) is None:
        return target.group(1).lower(), frozenset()
    return None, frozenset(word.lower() for word in _WORD.findall(sql))


@lru_cache(maxsize=1024)
def _multi_row(sql: str, rows: int) -> str | None:
    """`sql` inserting `rows` rows at once, or None when it cannot."""
    parts = _MERGEABLE.fullmatch(sql)
    if parts is None:
        return None
    values = ", ".join([parts["row"]] * rows)
    return f"{parts['head']}{values}{parts['tail']}"


class BatchedWrites:
    """Wraps a cursor for the length of one transaction; `flush` before commit."""

    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor
        # Per table: (sql, parameter rows) runs, oldest first.
        self._queued: dict[str, list[tuple[str, list[Sequence[Any]]]]] = {}

    def execute(self, sql: str, params: Sequence[Any] = ()) -> BatchedWrites:
        table, words = _plan(sql)
        if table is None:
            for named in [name for name in self._queued if name in words]:
                self._send(self._queued.pop(named))
            self._cursor.execute(sql, params)
            return self
        runs = self._queued.setdefault(table, [])
        if runs and runs[-1][0] == sql:
            runs[-1][1].append(params)
        else:
            runs.append((sql, [params]))
        return self

    def fetchone(self) -> Any:
        return self._cursor.fetchone()

    def fetchall(self) -> Any:
        return self._cursor.fetchall()

    @property
    def rowcount(self) -> int:
        # A queued write has not run yet, so it has no count to give.
        raise TypeError("rowcount is not available during batched writes")

    def flush(self) -> None:
        for runs in self._queued.values():
            self._send(runs)
        self._queued.clear()

    def _send(self, runs: list[tuple[str, list[Sequence[Any]]]]) -> None:
        for sql, rows in runs:
            start = 0
            for size in _CHUNKS:
                merged = _multi_row(sql, size) if len(rows) - start >= size else None
                while merged is not None and len(rows) - start >= size:
                    chunk = rows[start : start + size]
                    self._cursor.execute(merged, [value for row in chunk for value in row])
                    start += size
            if len(rows) - start == 1:
                self._cursor.execute(sql, rows[start])
            elif start < len(rows):
                self._cursor.executemany(sql, rows[start:])
