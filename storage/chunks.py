"""The FAISS index cache of each vector column (``ColumnIndex``).

SQLite is the source of truth: the document's vectors live in its row (a blob), and the chunk table
(``chunk_table``) has one row per vector: (chunk_id, doc_id, ord, start, end, ...). The FAISS index
is derived from those: it is caught up from SQLite whenever SQLite holds something it lacks (chunk ids
only grow, so ``max(chunk_id)`` and ``count(*)`` are a watermark), saved inside the database file
(``index_cache``: a closed database is one file), and rebuilt when the saved copy is missing, stale,
corrupt or of another shape. A ``<db>.tessera/`` folder of release 0.2 is read once and migrated.

Writes inside a transaction are recorded by TEMP triggers (``chunk_table.install_pending_triggers``);
after COMMIT they are applied to the index (nothing uncommitted ever reaches the index).

Catching up reads the new chunk rows and their vectors ``PAGE_ROWS`` at a time and adds each page to
the graph before reading the next, with room for all of them reserved in FAISS's storage first: what
a large commit (an INSERT ... SELECT of millions of rows) holds in memory besides the index itself is
about one page: the transaction's chunk ids are read a page at a time too (``PendingIds``), and the
id maps grow in place (docs/durability.md#memory-of-a-large-commit).
"""
from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import apsw

from .catalog import quote
from .chunk_table import ArrayIds, ColumnLayout, PendingIds, read_chunk_vectors, read_vectors
from .errors import StorageError
from .rowstore import MEMORY, RowStore

if TYPE_CHECKING:       # numpy and FAISS load with the first vector read or index, not with the database
    import numpy as np

    from .vectors import VectorIndex

log = logging.getLogger("tesseradb.storage")
STALE_TEMP_SECONDS = 3600       # an unfinished index save older than this is removed
PAGE_ROWS = 16_384              # chunk rows (and their vectors) read and added to the index at a time


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
        from . import index_cache       # the saved-index reader loads with the first vector index
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
            from . import index_cache       # the saved-index reader loads with the first vector index
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
        above = self._count_above(self.max_id) if max_id >= self.max_id else None
        if above is not None and count == len(self.index) + above:
            self._add_range(self.max_id, max_id, above)
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

    def _add_range(self, low: int, high: int, expected: int) -> None:
        """Add the chunks with ids in (low, high], ``PAGE_ROWS`` at a time (a page is a range of ids:
        they only grow). Chunks another connection commits meanwhile lie above ``high``: the next
        catch-up adds them; one it deletes meanwhile is either never read or found by the next one."""
        chunks = quote(self.layout.chunks)
        if self.index.untrained and expected > PAGE_ROWS:
            import numpy as np
            step = -(-expected // PAGE_ROWS)
            self._train_on(np.fromiter((r[0] for r in self.store.execute(
                f"SELECT chunk_id FROM (SELECT chunk_id, row_number() OVER (ORDER BY chunk_id) AS r FROM {chunks} "
                "WHERE chunk_id > ? AND chunk_id <= ?) WHERE r % ? = 0", (low, high, step))), np.int64))
        self.index.reserve(expected)
        while low < high:
            row = self.store.one(f"SELECT chunk_id FROM {chunks} WHERE chunk_id > ? AND chunk_id <= ? "
                                 "ORDER BY chunk_id LIMIT 1 OFFSET ?", (low, high, PAGE_ROWS - 1))
            top = int(row[0]) if row is not None else high
            self._add_where("WHERE c.chunk_id > ? AND c.chunk_id <= ?", (low, top))
            low = top

    def _add_ids(self, ids: ArrayIds | PendingIds, above: int = -2**63) -> None:
        """Add these chunks (those with ids above ``above``), ``PAGE_ROWS`` at a time, with room for
        all of them reserved first."""
        total = ids.count(above)
        if not total:
            return
        if self.index.untrained and total > PAGE_ROWS:
            self._train_on(ids.sample(-(-total // PAGE_ROWS), above))
        self.index.reserve(total)
        for page in ids.pages(PAGE_ROWS, above):
            self._add_where("WHERE c.chunk_id IN (SELECT value FROM json_each(?))", (json.dumps(page.tolist()),))

    def _train_on(self, sample: np.ndarray) -> None:
        """Train a quantized index that is not trained yet, before more than a page of vectors reaches
        it, on a page of them spread evenly over all (one read of everything trained on a sample of
        all too; the first page alone would miss what the later rows hold)."""
        _, _, vectors = read_vectors(self.store, self.layout, "WHERE c.chunk_id IN (SELECT value FROM json_each(?))",
                                     (json.dumps(sample.tolist()),))
        self.index.train(vectors)

    def _reconcile(self) -> None:
        import numpy as np
        cursor = self.store.execute(f"SELECT chunk_id FROM {quote(self.layout.chunks)} ORDER BY chunk_id")
        live = np.fromiter((r[0] for r in cursor), np.int64)
        have = np.sort(self.index.chunk_ids())
        gone = np.setdiff1d(have, live, assume_unique=True)
        if len(gone):
            self.index.remove_chunks(gone)
        self._add_ids(ArrayIds(np.setdiff1d(live, have, assume_unique=True)))

    def rebuild(self) -> VectorIndex:
        self.index, self.max_id, self.seen_version = self._new(), 0, None
        self.dirty_on_disk = True
        return self.catch_up()

    def compact(self) -> None:
        index = self.catch_up()
        self.index = index.compact()
        self.dirty_on_disk = True

    def apply_committed(self, added: Sequence[int] | np.ndarray | PendingIds,
                        removed: Sequence[int] | np.ndarray | PendingIds) -> None:
        """Apply the chunk changes of a transaction that has just committed: sorted distinct ids, or
        ``PendingIds`` (read from the TEMP pending rows a page at a time)."""
        if self.index is None:
            return  # loaded lazily, from SQLite, at the next search
        added, removed = ids_of(added), ids_of(removed)
        for page in removed.pages(PAGE_ROWS):
            self.index.remove_chunks(page)
        self._add_ids(added, self.max_id)
        # The watermark claims "every live chunk up to max_id is in the index". Chunks committed by
        # other connections since our last catch-up lie below this transaction's (ids only grow):
        # advance past ours only when there are none, else the next catch_up() would miss them.
        bounds = added.bounds()
        if bounds is not None and not self._count_between(self.max_id, bounds[0]):
            self.max_id = max(self.max_id, bounds[1])
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
            from . import index_cache       # the saved-index reader loads with the first vector index
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
        from . import index_cache       # the saved-index reader loads with the first vector index
        index_cache.remove(self.store, self.name)
        self.has_saved = False
        if self.legacy_path and os.path.isfile(self.legacy_path):
            os.remove(self.legacy_path)


def ids_of(ids: Sequence[int] | np.ndarray | PendingIds | ArrayIds) -> PendingIds | ArrayIds:
    """Chunk ids as something that reads them in pages (a list or array: sorted distinct)."""
    if isinstance(ids, (PendingIds, ArrayIds)):
        return ids
    import numpy as np
    return ArrayIds(np.asarray(ids, np.int64))


def legacy_index_directory(path: str) -> str | None:
    """The ``<db>.tessera/`` folder release 0.2 kept index files in, when there is one to migrate."""
    if path == MEMORY or not path:
        return None
    directory = os.path.abspath(path) + ".tessera"
    return directory if os.path.isdir(directory) else None
