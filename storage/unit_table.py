"""A vector column's passage units in SQLite: the small pieces of each chunk, as vectors (``passage_units``).

``_tessera_units_<n>`` sits beside the chunk table ``_tessera_chunks_<n>`` of a column with
``passage_units='windows'``: one row per chunk, ``(chunk_id, text_key, units)``, where ``units`` is
the chunk's unit vectors as one float16 matrix (row-major, little-endian, ``dims`` wide) and
``text_key`` the chunk's own key (the exact text the model read for the chunk, ``embed.reuse``), by
which a chunk with the same text elsewhere takes these units instead of running the model again.

The rows follow the chunk rows by themselves: a trigger deletes a chunk's units with its chunk row
(DELETE, REPLACE, UPDATE of a ``from`` column, SYNC, REBUILD and MODIFY COLUMN all delete and write
chunk rows), and they roll back with the transaction. The table is made the first time units are
written (a column given the option by ALTER TABLE ... MODIFY COLUMN gets it then) and dropped with
the chunk table.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .catalog import quote
from .rowstore import RowStore

if TYPE_CHECKING:
    import numpy as np

Layout = Any        # a chunk_table.ColumnLayout (not imported: chunk_table drops this table with its own)

PREFIX, CHUNKS_PREFIX = "_tessera_units_", "_tessera_chunks_"
BATCH = 500


def units_table(layout: Layout) -> str:
    """The units table's name: the chunk table's, ``units`` for ``chunks``."""
    name = layout.chunks
    return PREFIX + name[len(CHUNKS_PREFIX):] if name.startswith(CHUNKS_PREFIX) else name + "_units"


def exists(store: RowStore, layout: Layout) -> bool:
    return store.one("SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ?",
                     (units_table(layout),)) is not None


def ensure(store: RowStore, layout: Layout) -> None:
    """Make the units table and the trigger that deletes a chunk's units with it, once."""
    if exists(store, layout):
        return
    u, c = quote(units_table(layout)), quote(layout.chunks)
    store.execute(f"CREATE TABLE {u} (chunk_id INTEGER PRIMARY KEY, text_key TEXT, units BLOB NOT NULL)")
    store.execute(f"CREATE INDEX {quote(units_table(layout) + '_key')} ON {u} (text_key)")
    store.execute(f"CREATE TRIGGER {quote(units_table(layout) + '_del')} AFTER DELETE ON {c} "
                  f"BEGIN DELETE FROM {u} WHERE chunk_id = OLD.chunk_id; END")


def drop(store: RowStore, layout: Layout) -> None:
    store.execute(f"DROP TRIGGER IF EXISTS {quote(units_table(layout) + '_del')}")
    store.execute(f"DROP TABLE IF EXISTS {quote(units_table(layout))}")


def pack(matrix: "np.ndarray") -> bytes:
    import numpy as np
    return np.ascontiguousarray(matrix, dtype="<f2").tobytes()


def unpack(blob: bytes, dims: int) -> "np.ndarray":
    import numpy as np
    return np.frombuffer(blob, "<f2").reshape(-1, dims)


def write(store: RowStore, layout: Layout, rows: list[tuple[int, int, str | None, bytes]]) -> None:
    """rows: (doc_id, ord, text_key, units blob), for chunk rows already written."""
    if not rows:
        return
    ensure(store, layout)
    store.executemany(f"INSERT OR REPLACE INTO {quote(units_table(layout))} (chunk_id, text_key, units) "
                      f"SELECT chunk_id, ?3, ?4 FROM {quote(layout.chunks)} WHERE doc_id = ?1 AND ord = ?2", rows)


def find(store: RowStore, layout: Layout, keys: list[str]) -> dict[str, bytes]:
    """text_key -> units blob, for the keys some chunk of this column has units for."""
    if not keys or not exists(store, layout):
        return {}
    sql = (f"SELECT text_key, units FROM {quote(units_table(layout))} "
           "WHERE text_key IN (SELECT value FROM json_each(?)) GROUP BY text_key")
    out: dict[str, bytes] = {}
    for start in range(0, len(keys), BATCH):
        out.update(store.execute(sql, (json.dumps(keys[start:start + BATCH]),)))
    return out


def read(store: RowStore, layout: Layout, picks: list[tuple[int, int]]) -> dict[tuple[int, int], bytes]:
    """(doc, ord) -> units blob, for the chunks ``picks`` that have units."""
    if not picks or not exists(store, layout):
        return {}
    sql = (f"SELECT c.doc_id, c.ord, u.units FROM json_each(?) AS j "
           f"CROSS JOIN {quote(layout.chunks)} AS c "
           "ON c.doc_id = json_extract(j.value, '$[0]') AND c.ord = json_extract(j.value, '$[1]') "
           f"JOIN {quote(units_table(layout))} AS u ON u.chunk_id = c.chunk_id")
    return {(doc, ordinal): blob for doc, ordinal, blob in store.execute(sql, (json.dumps(picks),))}


def count(store: RowStore, layout: Layout) -> tuple[int, int]:
    """(chunks with units, unit vectors in all): what SHOW TABLE STATUS-like listings report."""
    if not exists(store, layout):
        return 0, 0
    row = store.one(f"SELECT COUNT(*), COALESCE(SUM(length(units)), 0) FROM {quote(units_table(layout))}")
    return int(row[0]), int(row[1]) // (2 * max(layout.dims, 1))
