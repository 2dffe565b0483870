"""A vector column's chunk table in SQLite: its layout, DDL, TEMP triggers, and the rows written and read.

``_tessera_chunks_<n>`` has one row per vector: (chunk_id, doc_id, ord, start, end, text_key) and the
location columns (heading path, section span, context line). The document's vectors live in its own
row (a blob); the chunk rows say which vector of the blob each chunk is. ``chunks.ColumnIndex`` builds
the FAISS index of the column from what this module reads.

Writes inside a transaction are recorded by TEMP triggers into ``temp._tessera_pending``; they roll
back with the transaction, and after COMMIT they are read back a page at a time (``PendingIds``) and
applied to the index.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np     # imported where used: plain SQL does not load numpy (start-up)

    from .fulltext import ChunkTextIndex

from . import unit_table
from .blobs import unpack
from .catalog import quote
from .rowstore import RowStore

log = logging.getLogger("tesseradb.storage")

PENDING = "temp._tessera_pending"
CREATE_PENDING = ("CREATE TEMP TABLE IF NOT EXISTS _tessera_pending ("
                  "chunks TEXT NOT NULL, chunk_id INTEGER NOT NULL, doc_id INTEGER NOT NULL, added INTEGER NOT NULL)")


@dataclass(frozen=True)
class ColumnLayout:
    """Where one vector column's data lives."""
    table: str           # user table (also the SQLite table)
    column: str
    chunks: str          # chunk table name
    is_array: bool
    dims: int
    metric: str
    hnsw_m: int
    ef_construction: int
    quantization: str = "none"   # 'none', '8bit', '1bit', '1bitsimple', 'rabitq1'..'rabitq8' (storage/quantized.py)


def create_chunk_table(store: RowStore, layout: ColumnLayout) -> None:
    c, t = quote(layout.chunks), quote(layout.table)
    store.execute(f"CREATE TABLE {c} (chunk_id INTEGER PRIMARY KEY AUTOINCREMENT, "
                  "doc_id INTEGER NOT NULL, ord INTEGER NOT NULL, start INTEGER, \"end\" INTEGER, text_key TEXT, "
                  + ", ".join(f"{name} {type_}" for name, type_ in LOCATION_COLUMNS) + ")")
    store.execute(f"CREATE INDEX {quote(layout.chunks + '_doc')} ON {c} (doc_id)")
    store.execute(f"CREATE INDEX {quote(layout.chunks + '_key')} ON {c} (text_key)")
    store.execute(f"CREATE TRIGGER {quote(layout.chunks + '_del')} AFTER DELETE ON {t} "
                  f"BEGIN DELETE FROM {c} WHERE doc_id = OLD.id; END")


def drop_chunk_table(store: RowStore, layout: ColumnLayout) -> None:
    unit_table.drop(store, layout)
    store.execute(f"DROP TABLE IF EXISTS {quote(layout.chunks)}")
    store.execute(f"DROP TRIGGER IF EXISTS {quote(layout.chunks + '_del')}")


class PendingIds:
    """The chunk ids one chunk table gained (``added``) or lost in the transaction this connection has
    just committed, read from ``temp._tessera_pending`` in sorted pages (a chunk added and removed
    again is in neither): what the COMMIT of a large INSERT ... SELECT holds of them is one page,
    not 8 bytes a row. Read before the TEMP rows are deleted (``committed_changes``)."""

    def __init__(self, store: RowStore, chunks: str, added: bool):
        self.store, self.chunks, self.added = store, chunks, int(added)

    def _query(self, select: str, above: int) -> str:
        return (f"SELECT {select} FROM (SELECT chunk_id FROM {PENDING} WHERE chunks = ?1 AND added = ?2 "
                f"AND chunk_id > ?4 EXCEPT SELECT chunk_id FROM {PENDING} WHERE chunks = ?1 AND added = ?3 "
                "AND chunk_id > ?4)")

    def count(self, above: int = -2**63) -> int:
        """How many ids there are above ``above``."""
        return int(self.store.one(self._query("COUNT(*)", above), self._params(above))[0])

    def bounds(self) -> tuple[int, int] | None:
        """(smallest, largest) id, None when there are none."""
        row = self.store.one(self._query("MIN(chunk_id), MAX(chunk_id)", -2**63), self._params(-2**63))
        return None if row is None or row[0] is None else (int(row[0]), int(row[1]))

    def pages(self, rows: int, above: int = -2**63) -> Iterator[np.ndarray]:
        """The ids above ``above``, ascending, as int64 arrays of at most ``rows`` (one query, streamed:
        SQLite's EXCEPT sorts in its temp store, which spills to a file past its page cache)."""
        import itertools

        import numpy as np
        cursor = self.store.execute(self._query("chunk_id", above) + " ORDER BY 1", self._params(above))
        while len(page := np.fromiter(itertools.islice((r[0] for r in cursor), rows), np.int64)):
            yield page

    def sample(self, every: int, above: int = -2**63) -> np.ndarray:
        """Every ``every``-th id above ``above`` (a training sample spread over all of them)."""
        import numpy as np
        sql = (f"SELECT chunk_id FROM (SELECT chunk_id, row_number() OVER (ORDER BY chunk_id) AS r FROM "
               f"({self._query('chunk_id', above)})) WHERE r % ?5 = 0")
        return np.fromiter((r[0] for r in self.store.execute(sql, (*self._params(above), every))), np.int64)

    def _params(self, above: int) -> tuple:
        return self.chunks, self.added, 1 - self.added, above


class ArrayIds:
    """Sorted distinct chunk ids already in memory, with the reading methods of :class:`PendingIds`."""

    def __init__(self, ids: np.ndarray):
        self.ids = ids

    def _above(self, above: int) -> np.ndarray:
        return self.ids[self.ids > above] if len(self.ids) and self.ids[0] <= above else self.ids

    def count(self, above: int = -2**63) -> int:
        return len(self._above(above))

    def bounds(self) -> tuple[int, int] | None:
        return (int(self.ids[0]), int(self.ids[-1])) if len(self.ids) else None

    def pages(self, rows: int, above: int = -2**63) -> Iterator[np.ndarray]:
        ids = self._above(above)
        for start in range(0, len(ids), rows):
            yield ids[start:start + rows]

    def sample(self, every: int, above: int = -2**63) -> np.ndarray:
        return self._above(above)[every - 1::every]


def committed_changes(store: RowStore) -> dict[str, tuple[PendingIds, PendingIds]]:
    """Per chunk table the transaction changed: (ids added, ids removed), read on demand from the TEMP
    pending rows (call after COMMIT, before deleting them)."""
    return {chunks: (PendingIds(store, chunks, True), PendingIds(store, chunks, False))
            for (chunks,) in list(store.execute(f"SELECT DISTINCT chunks FROM {PENDING}"))}


def install_pending_triggers(store: RowStore, layout: ColumnLayout) -> None:
    """Per-connection TEMP triggers that record chunk changes of the open transaction."""
    store.execute(CREATE_PENDING)
    if store.one("SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ?", (layout.chunks,)) is None:
        log.warning("the chunk table %s of %s.%s is missing: searches on the column fail until "
                    "REPAIR TABLE %s", layout.chunks, layout.table, layout.column, layout.table)
        return                                   # the database still opens, so that it can be repaired
    c, name = quote(layout.chunks), layout.chunks.replace("'", "''")
    for event, row, added in (("INSERT", "NEW", 1), ("DELETE", "OLD", 0)):
        trig = quote(f"{layout.chunks}_pending_{event.lower()}")
        store.execute(f"CREATE TEMP TRIGGER IF NOT EXISTS {trig} AFTER {event} ON main.{c} BEGIN "
                      f"INSERT INTO _tessera_pending VALUES ('{name}', {row}.chunk_id, {row}.doc_id, {added}); END")


#: Where a chunk sits in its document's text (``tesseradb.embed.chunk_context``): its heading path, its
#: section's span, and the context line the model read before it (NULL: none).
LOCATION_COLUMNS = (("heading", "TEXT"), ("sec_start", "INTEGER"), ("sec_end", "INTEGER"), ("context", "TEXT"))


def write_chunks(store: RowStore, layout: ColumnLayout, rows: list[tuple], *,
                 index: ChunkTextIndex | None = None, texts: Sequence[str | None] | None = None) -> None:
    """rows: (doc_id, ord, start, end), (doc_id, ord, start, end, text_key), or that followed by the
    :data:`LOCATION_COLUMNS`; the key (see ``tesseradb.embed.reuse``) names the exact text a model
    embedded into the chunk's vector.

    ``index``, the column's chunk full-text index, and ``texts``, per row the ``from`` text of its
    document exactly as SQLite holds it (None: not known here): when the index takes them
    (``ChunkTextIndex.takes_entries``), the chunks get ids given here and their entries are added
    first, cut from those texts; the index's trigger indexes the others (it reads the document's
    text again, from the start, for each chunk)."""
    if rows and len(rows[0]) == 5 + len(LOCATION_COLUMNS):
        names = ", ".join(name for name, _ in LOCATION_COLUMNS)
        columns = f"doc_id, ord, start, \"end\", text_key, {names}"
        if index is not None and texts is not None and index.takes_entries(store):
            first = next_chunk_id(store, layout)
            index.add_entries(store, list(_entries(rows, texts, first)))
            rows, columns = [(first + n, *row) for n, row in enumerate(rows)], "chunk_id, " + columns
        store.executemany(f"INSERT INTO {quote(layout.chunks)} ({columns}) "
                          f"VALUES ({', '.join('?' * len(rows[0]))})", rows)
        return
    if rows and len(rows[0]) == 5:
        ensure_key_column(store, layout)
        store.executemany(f"INSERT INTO {quote(layout.chunks)} (doc_id, ord, start, \"end\", text_key) "
                          "VALUES (?, ?, ?, ?, ?)", rows)
        return
    store.executemany(f"INSERT INTO {quote(layout.chunks)} (doc_id, ord, start, \"end\") VALUES (?, ?, ?, ?)", rows)


def _entries(rows: list[tuple], texts: Sequence[str | None], first: int) -> Iterator[tuple[int, str, str]]:
    """The full-text entries of full-shape chunk rows about to get ids from ``first`` on: what the
    index's trigger would cut in SQL (``COALESCE(context, heading, '')`` and ``substr(text, start + 1,
    end - start)``), for the rows whose text is known and whose span is a plain one."""
    for n, (row, text) in enumerate(zip(rows, texts)):
        start, end, heading, context = row[2], row[3], row[5], row[8]
        if text is not None and start is not None and end is not None and 0 <= start <= end:
            yield first + n, context if context is not None else heading if heading is not None else "", text[start:end]


def next_chunk_id(store: RowStore, layout: ColumnLayout) -> int:
    """The id the next chunk row of the table gets (AUTOINCREMENT: above every id it ever had; inside
    the write transaction, so nobody else takes it)."""
    c = quote(layout.chunks)
    return int(store.one(f"SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = ?), 0), "
                         f"COALESCE((SELECT MAX(chunk_id) FROM {c}), 0)) + 1", (layout.chunks,))[0])


def has_key_column(store: RowStore, layout: ColumnLayout) -> bool:
    return any(r[1] == "text_key" for r in store.execute(f"PRAGMA table_info({quote(layout.chunks)})"))


def ensure_key_column(store: RowStore, layout: ColumnLayout) -> None:
    """Chunk tables made before chunk keys existed get the column (and its index) at their next write;
    their old rows keep a NULL key (never matched) until their document is written again."""
    if has_key_column(store, layout):
        return
    store.execute(f"ALTER TABLE {quote(layout.chunks)} ADD COLUMN text_key TEXT")
    store.execute(f"CREATE INDEX IF NOT EXISTS {quote(layout.chunks + '_key')} ON {quote(layout.chunks)} (text_key)")


def has_location_columns(store: RowStore, chunks: str) -> bool:
    return any(r[1] == "heading" for r in store.execute(f"PRAGMA table_info({quote(chunks)})"))


def add_location_columns(store: RowStore, layout: ColumnLayout) -> bool:
    """A chunk table of a release before heading paths gets the location columns (and the key column);
    True when it was such a table."""
    ensure_key_column(store, layout)
    if has_location_columns(store, layout.chunks):
        return False
    for name, type_ in LOCATION_COLUMNS:
        store.execute(f"ALTER TABLE {quote(layout.chunks)} ADD COLUMN {name} {type_}")
    return True


def find_keys(store: RowStore, layout: ColumnLayout, keys: list[str]) -> list[tuple[str, int, int]]:
    """(text_key, doc_id, ord) of chunks whose key is one of ``keys`` (one row per key at most)."""
    if not keys or not has_key_column(store, layout):
        return []
    sql = (f"SELECT text_key, MIN(doc_id), ord FROM {quote(layout.chunks)} "
           "WHERE text_key IN (SELECT value FROM json_each(?)) GROUP BY text_key")
    out = []
    for start in range(0, len(keys), KEY_BATCH):
        out.extend(store.execute(sql, (json.dumps(keys[start:start + KEY_BATCH]),)))
    return out


KEY_BATCH = 2000


def delete_doc_chunks(store: RowStore, layout: ColumnLayout, doc_ids: list[int]) -> None:
    store.executemany(f"DELETE FROM {quote(layout.chunks)} WHERE doc_id = ?", [(d,) for d in doc_ids])


def read_vectors(store: RowStore, layout: ColumnLayout, where: str = "", params: tuple = ()
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(chunk_ids, doc_ids, vectors) of the chunks matching ``where`` (on chunk table alias c).

    The chunk rows are read first, then each document's vector blob once (in batches of documents):
    joining the blob onto every chunk row would copy a many-chunk document's blob once per chunk.
    """
    import numpy as np
    rows = list(store.execute(f"SELECT c.chunk_id, c.doc_id, c.ord FROM {quote(layout.chunks)} c {where} "
                              "ORDER BY c.doc_id, c.ord", params))
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, layout.dims), np.float32)
    chunk_ids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
    doc_ids = np.fromiter((r[1] for r in rows), np.int64, len(rows))
    ords = np.fromiter((r[2] for r in rows), np.int64, len(rows))
    matrix = np.zeros((len(rows), layout.dims), np.float32)
    keep = np.zeros(len(rows), bool)
    docs = np.unique(doc_ids)
    sql = (f"SELECT id, {quote(layout.column)} FROM {quote(layout.table)} "
           "WHERE id IN (SELECT value FROM json_each(?))")
    for start in range(0, len(docs), BLOB_BATCH):
        part = docs[start:start + BLOB_BATCH]
        blobs = dict(store.execute(sql, (json.dumps(part.tolist()),)))
        for doc in part.tolist():
            lo, hi = np.searchsorted(doc_ids, doc, "left"), np.searchsorted(doc_ids, doc, "right")
            vectors = unpack(blobs.get(doc), layout.is_array)
            if not len(vectors) or vectors.shape[1] != layout.dims:
                continue
            present = ords[lo:hi] < len(vectors)
            matrix[lo:hi][present] = vectors[ords[lo:hi][present]]
            keep[lo:hi] = present
    return chunk_ids[keep], doc_ids[keep], matrix[keep]


BLOB_BATCH = 256


def read_chunk_vectors(store: RowStore, layout: ColumnLayout, chunk_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(chunk ids found, their vectors) for a few chunk ids, fast: one join for a float_vector column
    (its blob is the vector); for an array, the chunk rows, then each document's blob once."""
    import numpy as np
    ids = json.dumps(np.asarray(chunk_ids, np.int64).tolist())
    c, t, v = quote(layout.chunks), quote(layout.table), quote(layout.column)
    if not layout.is_array:
        rows = [(cid, blob) for cid, blob in store.execute(
            f"SELECT c.chunk_id, t.{v} FROM {c} c JOIN {t} t ON t.id = c.doc_id "
            "WHERE c.chunk_id IN (SELECT value FROM json_each(?))", (ids,)) if blob and len(blob) == 4 * layout.dims]
        found = np.fromiter((r[0] for r in rows), np.int64, len(rows))
        return found, np.frombuffer(b"".join(r[1] for r in rows), "<f4").reshape(len(rows), layout.dims)
    rows = list(store.execute(f"SELECT chunk_id, doc_id, ord FROM {c} WHERE chunk_id IN (SELECT value FROM json_each(?))",
                              (ids,)))
    docs = json.dumps(sorted({r[1] for r in rows}))
    blobs = dict(store.execute(f"SELECT id, {v} FROM {t} WHERE id IN (SELECT value FROM json_each(?))", (docs,)))
    found, vectors = [], []
    for chunk_id, doc_id, ord_ in rows:
        x = unpack(blobs.get(doc_id), True)
        if ord_ < len(x) and x.shape[1] == layout.dims:
            found.append(chunk_id)
            vectors.append(x[ord_])
    return np.asarray(found, np.int64), np.asarray(vectors, np.float32).reshape(len(found), layout.dims)
