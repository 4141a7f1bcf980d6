"""A cursor that holds a replay's writes back and sends them with `executemany`.

Read-model handlers write one row per statement; a replay runs hundreds of thousands of them.
Plain `INSERT`/`UPDATE` statements are queued per table, in order, and consecutive ones with
the same SQL go out as one `executemany`. Writes to different tables commute (read-model
tables have no triggers, views or foreign keys), so only each table's own order is kept.
Anything else (a read, a statement naming a second table, `RETURNING`) runs at once, after the
queued writes of every table its text names, so a handler always reads what the handlers
before it wrote.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_QUEUEABLE = re.compile(r"\s*(?:INSERT\s+INTO|UPDATE)\s+(\w+)\s", re.IGNORECASE)
# SELECT or FROM may read another table (INSERT ... SELECT, UPDATE ... FROM).
_NOT_QUEUEABLE = re.compile(r"\b(?:SELECT|FROM|RETURNING)\b", re.IGNORECASE)
_WORD = re.compile(r"\w+")


def _plan(sql: str) -> tuple[str | None, frozenset[str]]:
    """The table a queueable statement writes, else None and every word of the statement."""
    target = _QUEUEABLE.match(sql)
    if target is not None and _NOT_QUEUEABLE.search(sql) is None:
        return target.group(1).lower(), frozenset()
    return None, frozenset(word.lower() for word in _WORD.findall(sql))


class BatchedWrites:
    """Wraps a sqlite3 cursor for the length of one transaction; `flush` before commit."""

    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor
        # Per table: (sql, parameter rows) runs, oldest first.
        self._queued: dict[str, list[tuple[str, list[Sequence[Any]]]]] = {}
        self._plans: dict[str, tuple[str | None, frozenset[str]]] = {}

    def execute(self, sql: str, params: Sequence[Any] = ()) -> BatchedWrites:
        plan = self._plans.get(sql)
        if plan is None:
            plan = self._plans[sql] = _plan(sql)
        table, words = plan
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
        raise TypeError("rowcount is not available during a replay's batched writes")

    def flush(self) -> None:
        for runs in self._queued.values():
            self._send(runs)
        self._queued.clear()

    def _send(self, runs: list[tuple[str, list[Sequence[Any]]]]) -> None:
        for sql, rows in runs:
            if len(rows) == 1:
                self._cursor.execute(sql, rows[0])
            else:
                self._cursor.executemany(sql, rows)
