"""How the catalog read model writes and reads back its rows: at once (live), or held until the
end of a replay's batch and written once each, in their final state.

A row is its columns plus `doc`, the rendered resource as JSON text.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from functools import lru_cache
from typing import Any, Final

from projections.json_text import json_text

# Documents a replay keeps after writing them: far more than the rows edited between one
# write and the next edit of the same resource in any history, and a few MiB at most.
DOCUMENTS_KEPT: Final = 10_000

Doc = dict[str, Any]


@lru_cache(maxsize=64)
def _insert_sql(table: str, columns: tuple[str, ...]) -> str:
    marks = ", ".join("?" * len(columns))
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"


@lru_cache(maxsize=64)
def _update_sql(table: str, columns: tuple[str, ...]) -> str:
    sets = ", ".join(f"{name} = ?" for name in columns)
    return f"UPDATE {table} SET {sets} WHERE id = ?"


def _read_back(cur: Any, table: str, row_id: str) -> Doc:
    row = cur.execute(f"SELECT doc FROM {table} WHERE id = ?", (row_id,)).fetchone()
    if row is None:
        raise LookupError(f"{table} row {row_id} missing")  # events out of order: a bug
    doc: Doc = json.loads(row["doc"])
    return doc


class LiveRows:
    """Written at once and read back from the table, which other processes share."""

    def insert(self, cur: Any, table: str, columns: dict[str, Any], doc: Doc) -> None:
        cur.execute(_insert_sql(table, (*columns, "doc")), (*columns.values(), json_text(doc)))

    def load(self, cur: Any, table: str, row_id: str) -> Doc:
        return _read_back(cur, table, row_id)

    def store(self, cur: Any, table: str, row_id: str, doc: Doc, **columns: Any) -> None:
        cur.execute(
            _update_sql(table, ("doc", *columns)), (json_text(doc), *columns.values(), row_id)
        )

    def write_held(self, cur: Any) -> None:
        """Nothing is held."""


class WrittenDocuments:
    """The documents last written, by row id, the oldest dropped past `capacity`.

    A document kept here is the very dict that was serialised into its row; handlers change
    it and store it again, as they would a copy read back (`json.loads` of the same text
    serialises to the same text).
    """

    def __init__(self, capacity: int = DOCUMENTS_KEPT) -> None:
        self.capacity = capacity
        self._docs: OrderedDict[str, Doc] = OrderedDict()  # least recently written first

    def get(self, row_id: str) -> Doc | None:
        return self._docs.get(row_id)

    def put(self, row_id: str, doc: Doc) -> None:
        self._docs[row_id] = doc
        self._docs.move_to_end(row_id)
        if len(self._docs) > self.capacity:
            self._docs.popitem(last=False)


class ReplayRows:
    """A replay's rows: its tables are fresh and written by it alone, so an edit finds its
    document in memory instead of a SELECT, and a row created and edited in one batch is
    inserted once, as it ends up. `write_held` before the batch commits.

    Each row's final state is what the live statements would leave: an insert followed by
    updates of the same row is that insert with the updated values, and successive updates
    of one row are one update of every column they set, each to its last value.
    """

    def __init__(self, capacity: int = DOCUMENTS_KEPT) -> None:
        # table -> row id -> (columns, doc): rows this batch creates / changes.
        self._new: dict[str, dict[str, tuple[dict[str, Any], Doc]]] = {}
        self._changed: dict[str, dict[str, tuple[dict[str, Any], Doc]]] = {}
        self._docs = WrittenDocuments(capacity)

    def insert(self, cur: Any, table: str, columns: dict[str, Any], doc: Doc) -> None:
        row_id = columns["id"]
        new = self._new.setdefault(table, {})
        if row_id in new:
            self.write_held(cur)  # so the second insert fails on the key, as it would live
            new = self._new.setdefault(table, {})
        new[row_id] = (columns, doc)
        self._docs.put(row_id, doc)

    def load(self, cur: Any, table: str, row_id: str) -> Doc:
        for held in (self._new, self._changed):
            row = held.get(table, {}).get(row_id)
            if row is not None:
                return row[1]
        doc = self._docs.get(row_id)
        return doc if doc is not None else _read_back(cur, table, row_id)

    def store(self, cur: Any, table: str, row_id: str, doc: Doc, **columns: Any) -> None:
        new = self._new.get(table, {})
        held = new if row_id in new else self._changed.setdefault(table, {})
        earlier = held.get(row_id)
        held[row_id] = ({**earlier[0], **columns} if earlier else columns, doc)
        self._docs.put(row_id, doc)

    def write_held(self, cur: Any) -> None:
        for table, rows in self._new.items():
            for columns, doc in rows.values():
                sql = _insert_sql(table, (*columns, "doc"))
                cur.execute(sql, (*columns.values(), json_text(doc)))
        for table, rows in self._changed.items():
            for row_id, (columns, doc) in rows.items():
                sql = _update_sql(table, ("doc", *columns))
                cur.execute(sql, (json_text(doc), *columns.values(), row_id))
        self._new.clear()
        self._changed.clear()
