"""Where synced rows came from: for each row that ``LOAD DATA ... SYNC`` wrote, the folder it was
loaded from (the glob's prefix, resolved), its path under it, and the file's sha256, modification
time and size. The engine's own bookkeeping, beside the user's columns, written and rolled back in
the statement's transaction (``tesseradb.sql.statements.sync`` reads and writes it)."""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from .rowstore import RowStore

SOURCES = "_tessera_sources"
CREATE = (f"CREATE TABLE IF NOT EXISTS {SOURCES} ("
          "tbl TEXT NOT NULL COLLATE NOCASE, row_id INTEGER NOT NULL, prefix TEXT NOT NULL, "
          "path TEXT NOT NULL, sha256 TEXT NOT NULL, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, "
          "PRIMARY KEY (tbl, row_id))")


@dataclass(frozen=True)
class Source:
    row_id: int
    prefix: str
    path: str
    sha256: str
    mtime_ns: int
    size: int


def _exists(store: RowStore) -> bool:
    return store.one("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (SOURCES,)) is not None


def of_table(store: RowStore, table: str) -> list[Source]:
    if not _exists(store):
        return []
    return [Source(*r) for r in store.execute(
        f"SELECT row_id, prefix, path, sha256, mtime_ns, size FROM {SOURCES} WHERE tbl = ? ORDER BY row_id",
        (table,))]


def record(store: RowStore, table: str, sources: Sequence[Source]) -> None:
    if not sources:
        return
    store.execute(CREATE)
    store.executemany(f"INSERT OR REPLACE INTO {SOURCES} (tbl, row_id, prefix, path, sha256, mtime_ns, size) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?)",
                      [(table, s.row_id, s.prefix, s.path, s.sha256, s.mtime_ns, s.size) for s in sources])


def forget(store: RowStore, table: str, row_ids: Sequence[int]) -> None:
    if row_ids and _exists(store):
        store.execute(f"DELETE FROM {SOURCES} WHERE tbl = ? AND row_id IN (SELECT value FROM json_each(?))",
                      (table, json.dumps(list(row_ids))))


def forget_table(store: RowStore, table: str) -> None:
    """DROP TABLE: its rows' sources go with it."""
    if _exists(store):
        store.execute(f"DELETE FROM {SOURCES} WHERE tbl = ?", (table,))
