"""Chunk tables and the FAISS index cache of each vector column.

SQLite is the source of truth: the document's vectors live in its row (a blob), and the chunk table
``_tessera_chunks_<n>`` has one row per vector: (chunk_id, doc_id, ord, start, end). The FAISS index
is derived from those: it is caught up from SQLite whenever SQLite holds something it lacks (chunk ids
only grow, so ``max(chunk_id)`` and ``count(*)`` are a watermark), saved inside the database file
(``index_cache``: a closed database is one file), and rebuilt when the saved copy is missing, stale,
corrupt or of another shape. A ``<db>.tessera/`` folder of release 0.2 is read once and migrated.

Writes inside a transaction are recorded by TEMP triggers into ``temp._tessera_pending``; they roll
back with the transaction, and after COMMIT they are applied to the index (nothing uncommitted ever
reaches the index).
"""
from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import apsw

from . import index_cache
from .blobs import unpack
from .catalog import quote
from .errors import StorageError
from .rowstore import MEMORY, RowStore

if TYPE_CHECKING:       # numpy and FAISS load with the first vector read or index, not with the database
    import numpy as np

    from .vectors import VectorIndex

log = logging.getLogger("tesseradb.storage")
STALE_TEMP_SECONDS = 3600       # an unfinished index save older than this is removed

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
    quantization: str = "none"   # 'none', '8bit', '1bit', '1bitsimple' (storage/quantized.py)


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
    store.execute(f"DROP TABLE IF EXISTS {quote(layout.chunks)}")
    store.execute(f"DROP TRIGGER IF EXISTS {quote(layout.chunks + '_del')}")


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


def write_chunks(store: RowStore, layout: ColumnLayout, rows: list[tuple]) -> None:
    """rows: (doc_id, ord, start, end), (doc_id, ord, start, end, text_key), or that followed by the
    :data:`LOCATION_COLUMNS`; the key (see ``tesseradb.embed.reuse``) names the exact text a model
    embedded into the chunk's vector."""
    if rows and len(rows[0]) == 5 + len(LOCATION_COLUMNS):
        names = ", ".join(name for name, _ in LOCATION_COLUMNS)
        store.executemany(f"INSERT INTO {quote(layout.chunks)} (doc_id, ord, start, \"end\", text_key, {names}) "
                          f"VALUES ({', '.join('?' * len(rows[0]))})", rows)
        return
    if rows and len(rows[0]) == 5:
        ensure_key_column(store, layout)
        store.executemany(f"INSERT INTO {quote(layout.chunks)} (doc_id, ord, start, \"end\", text_key) "
                          "VALUES (?, ?, ?, ?, ?)", rows)
        return
    store.executemany(f"INSERT INTO {quote(layout.chunks)} (doc_id, ord, start, \"end\") VALUES (?, ?, ?, ?)", rows)


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


class ColumnIndex:
    """The FAISS index of one vector column, kept in step with committed SQLite data."""

    def __init__(self, store: RowStore, layout: ColumnLayout, legacy_directory: str | None = None):
        self.store = store
        self.layout = layout
        self.name = layout.chunks                 # its saved copy in index_cache
        self.persistent = store.path != MEMORY    # an in-memory database saves only for BACKUP
        self.legacy_path = (os.path.join(legacy_directory, f"{layout.chunks}.faiss")
                            if legacy_directory else None)
        self.index: VectorIndex | None = None
        self.max_id = 0
        self.dirty_on_disk = False
        self.has_saved = False
        self.saved_size = self.saved_max_id = 0
        self.seen_version: int | None = None
        self.problem: str | None = None      # why the file could not be used (the index was rebuilt)

    # -- building and catching up ----------------------------------------------------------
    def _new(self) -> VectorIndex:
        from .vectors import VectorIndex
        lay = self.layout
        index = VectorIndex(lay.dims, lay.metric, m=lay.hnsw_m, ef_construction=lay.ef_construction,
                            quantization=lay.quantization)
        index.rescore_source = self.exact_vectors
        return index

    def exact_vectors(self, chunk_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids found, their float32 vectors) read from SQLite: what a quantized index rescores
        its candidates with (a few dozen per query) and retrains from when compacted."""
        import numpy as np
        return read_chunk_vectors(self.store, self.layout, np.asarray(chunk_ids, np.int64))

    def _watermark(self) -> tuple[int, int]:
        row = self.store.one(f"SELECT COALESCE(MAX(chunk_id), 0), COUNT(*) FROM {quote(self.layout.chunks)}")
        return int(row[0]), int(row[1])

    def read_saved(self) -> tuple[VectorIndex, str] | None:
        """The saved copy inside the database: ``(index, watermark)``, None when there is none;
        StorageError when it cannot be trusted."""
        from .vectors import VectorIndex
        with index_cache.reading(self.store, self.name) as stream:
            return VectorIndex.load(stream) if stream is not None else None

    def _load_saved(self) -> None:
        loaded, source = None, "the saved index"
        try:
            loaded = self.read_saved()
        except StorageError as exc:
            self.problem = getattr(exc, "reason", None) or str(exc)
            log.warning("%s of %s.%s is unusable (%s); rebuilding it from the table",
                        source, self.layout.table, self.layout.column, exc)
        if loaded is None and self.legacy_path is not None:
            loaded, source = self._load_legacy(), f"index file {self.legacy_path}"
        foreign = self._foreign(loaded)
        if foreign:
            self.problem = foreign
            log.warning("%s of %s.%s is unusable (%s); rebuilding it from the table",
                        source, self.layout.table, self.layout.column, foreign)
            loaded = None
        if loaded is not None and not self._fits(loaded[0]):
            self.problem = "it holds another shape of index than the column"
            log.info("%s holds another shape of index than column %s.%s asks for; rebuilding it",
                     source, self.layout.table, self.layout.column)
            loaded = None
        if loaded is not None:
            self.index, mark = loaded
            self.index.rescore_source = self.exact_vectors
            self.max_id = int(mark.split(":")[0]) if mark else 0
            self.saved_size, self.saved_max_id = len(self.index), self.max_id
            self.has_saved = source == "the saved index"
            self.dirty_on_disk = not self.has_saved      # migrated from a side file: save it inside

    def _foreign(self, loaded) -> str | None:
        """Why a whole saved index is another column's (its watermark names its chunk table), or None."""
        parts = loaded[1].split(":") if loaded is not None else []
        if len(parts) > 2 and parts[2] != self.layout.chunks:
            return f"it is the index of another column ({parts[2]})"
        return None

    def _fits(self, index: VectorIndex) -> bool:
        lay = self.layout
        return (index.quantization, index.dims, index.metric) == (lay.quantization, lay.dims, lay.metric)

    def _load_legacy(self) -> tuple[VectorIndex, str] | None:
        """A side file of release 0.2 (``<db>.tessera/<chunks>.faiss``), read once to migrate it."""
        from .vectors import VectorIndex
        if not self.store.read_only:
            self._remove_stale_temps()
        if os.path.islink(self.legacy_path) or not os.path.isfile(self.legacy_path):
            return None             # never followed, never opened blocking: a FIFO, a folder, a link
        try:
            return VectorIndex.load(self.legacy_path)
        except (StorageError, OSError) as exc:
            log.warning("index file %s is unusable (%s); rebuilding it from the database", self.legacy_path, exc)
            return None

    def _remove_stale_temps(self, age: float = STALE_TEMP_SECONDS) -> None:
        """Delete what saves killed half-way left behind (``<file>.<random>.tmp``, never read).
        Only old ones: a fresh one may be another process's save in progress."""
        folder, base = os.path.split(self.legacy_path)
        cutoff = time.time() - age
        try:
            names = [n for n in os.listdir(folder) if n.startswith(base + ".") and n.endswith(".tmp")]
        except OSError:
            return
        for name in names:
            full = os.path.join(folder, name)
            try:
                if os.path.getmtime(full) < cutoff:
                    os.remove(full)
                    log.info("removed %s, left by an index save that did not finish", full)
            except OSError:
                pass

    def catch_up(self) -> VectorIndex:
        """Bring the index up to the committed state of SQLite (call outside a write transaction)."""
        from_file = False
        if self.index is None:
            if self.persistent or index_cache.exists(self.store):
                self._load_saved()
            from_file = self.index is not None
        if self.index is None:
            self.index, self.max_id = self._new(), 0
        version = self.store.data_version()
        if version == self.seen_version:
            return self.index          # nobody else committed since the last check; own commits are applied
        max_id, count = self._watermark()
        self.seen_version = version
        if max_id == self.max_id and count == len(self.index):
            return self.index
        if from_file:
            log.info("the saved index of %s.%s is behind the database (saved %d:%d, table %d:%d); catching up",
                     self.layout.table, self.layout.column, self.max_id, len(self.index), max_id, count)
        if max_id >= self.max_id and count == len(self.index) + self._count_above(self.max_id):
            self._add_where("WHERE c.chunk_id > ?", (self.max_id,))
        else:
            self._reconcile()
        self.max_id = max_id
        self.dirty_on_disk = True
        return self.index

    def _count_above(self, chunk_id: int) -> int:
        return int(self.store.one(f"SELECT COUNT(*) FROM {quote(self.layout.chunks)} WHERE chunk_id > ?",
                                  (chunk_id,))[0])

    def _add_where(self, where: str, params: tuple) -> None:
        chunk_ids, doc_ids, vectors = read_vectors(self.store, self.layout, where, params)
        if len(chunk_ids):
            self.index.add(chunk_ids, doc_ids, vectors)

    def _reconcile(self) -> None:
        live = {r[0] for r in self.store.execute(f"SELECT chunk_id FROM {quote(self.layout.chunks)}")}
        have = set(self.index.chunk_ids().tolist())
        gone = have - live
        if gone:
            self.index.remove_chunks(gone)
        missing = sorted(live - have)
        for start in range(0, len(missing), 500):
            part = missing[start:start + 500]
            marks = ",".join("?" * len(part))
            self._add_where(f"WHERE c.chunk_id IN ({marks})", tuple(part))

    def rebuild(self) -> VectorIndex:
        self.index, self.max_id, self.seen_version = self._new(), 0, None
        self.dirty_on_disk = True
        return self.catch_up()

    def compact(self) -> None:
        index = self.catch_up()
        self.index = index.compact()
        self.dirty_on_disk = True

    def apply_committed(self, added: list[int], removed: list[int]) -> None:
        """Apply the chunk changes of a transaction that has just committed."""
        if self.index is None:
            return  # loaded lazily, from SQLite, at the next search
        if removed:
            self.index.remove_chunks(removed)
        fresh = [c for c in added if c > self.max_id]
        for start in range(0, len(fresh), 500):
            part = fresh[start:start + 500]
            self._add_where(f"WHERE c.chunk_id IN ({','.join('?' * len(part))})", tuple(part))
        # The watermark claims "every live chunk up to max_id is in the index". Chunks committed by
        # other connections since our last catch-up lie below this transaction's (ids only grow):
        # advance past ours only when there are none, else the next catch_up() would miss them.
        if added and not self._count_between(self.max_id, min(added)):
            self.max_id = max(self.max_id, max(added))
        self.dirty_on_disk = True

    def _count_between(self, low: int, high: int) -> int:
        return int(self.store.one(f"SELECT COUNT(*) FROM {quote(self.layout.chunks)} "
                                  "WHERE chunk_id > ? AND chunk_id < ?", (low, high))[0])

    def save(self, *, only_if_far_behind: bool = False, force: bool = False) -> None:
        """Save the index inside the database. With ``only_if_far_behind``, only when the saved copy
        lags the index by more than a quarter of its vectors or 20,000 of them (it is a cache: a stale
        one is caught up from SQLite on open, so saving on every commit would only cost time).
        ``force`` saves an in-memory database too (BACKUP)."""
        if self.index is None or self.store.read_only or not (self.persistent or force):
            return
        if not (self.dirty_on_disk or force and not self.has_saved):
            return
        if only_if_far_behind and self.has_saved:
            behind = abs(len(self.index) - self.saved_size) + abs(self.max_id - self.saved_max_id)
            if behind <= max(len(self.index) // 4, 20_000):
                return
        mark = f"{self.max_id}:{len(self.index)}:{self.layout.chunks}"
        try:
            saved = index_cache.write(self.store, self.name, lambda stream: self.index.save(stream, mark))
        except (OSError, apsw.Error) as exc:     # disk full: the saved copy is a cache, the data is safe
            log.warning("could not save the index of %s.%s (%s); it is caught up from the table when next "
                        "loaded", self.layout.table, self.layout.column, exc)
            return
        if not saved:                    # locked by another writer, or read-only: next time
            return
        self.dirty_on_disk, self.has_saved = False, True
        self.saved_size, self.saved_max_id = len(self.index), self.max_id
        self.problem = None             # the saved copy is this index again
        self._forget_legacy()

    def _forget_legacy(self) -> None:
        """Once saved inside the database, the 0.2 side file (and its folder, when empty) goes."""
        if self.legacy_path is None:
            return
        for remove in (lambda: os.remove(self.legacy_path), lambda: os.rmdir(os.path.dirname(self.legacy_path))):
            try:
                remove()
            except OSError:
                pass
        self.legacy_path = None

    def remove_file(self) -> None:
        """Forget the saved copy (inside the caller's transaction: a ROLLBACK keeps it)."""
        index_cache.remove(self.store, self.name)
        self.has_saved = False
        if self.legacy_path and os.path.isfile(self.legacy_path):
            os.remove(self.legacy_path)


def legacy_index_directory(path: str) -> str | None:
    """The ``<db>.tessera/`` folder release 0.2 kept index files in, when there is one to migrate."""
    if path == MEMORY or not path:
        return None
    directory = os.path.abspath(path) + ".tessera"
    return directory if os.path.isdir(directory) else None
