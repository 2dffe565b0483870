"""One FAISS HNSW index per vector column: the derived cache that answers ``knn()``.

SQLite holds every chunk vector; this index holds a graph over the same vectors so that the k nearest
*documents* can be found quickly. Vectors live at dense *positions* 0..n-1 (the order they were
added, which is FAISS's own numbering); two arrays map a position to its chunk id and doc id, and a
third says whether it is still alive. A delete only clears ``alive`` (HNSW has no removal,
faiss#3339); searches exclude dead positions with an ``IDSelectorBitmap``, and ``compact()`` rebuilds.

Concurrency: any number of threads may call the read methods (``search``, ``explain``, ``save``,
``compact``, ``chunk_ids``, ``len``) at once; ``add``/``remove_*`` take the lock exclusively and wait
for running searches. See docs/vector_index.md for the design and the measured thresholds.

The module's jobs are split: the graph of each quantization is built by ``quantized`` (the index
kinds), a search is sized by ``vector_plan`` and run by ``vector_search`` (the ``Searching`` half of
this class), and ``vector_file`` saves and loads an index in ``index_file``'s format.

With ``quantization`` ('8bit', '1bit', '1bitsimple', 'rabitq1'..'rabitq8'; see ``quantized``) the graph holds codes, not
float32 vectors: a search takes ``k * oversampling`` candidate documents from the codes and, with
``rescore`` (the default), ranks them by their exact distances, computed from the float32 vectors
that ``rescore_source`` reads from SQLite.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

import faiss
import numpy as np

from . import quantized, ranking, vector_file
from .errors import IndexCorrupt
from .positions import Column, KeyIndex, RWLock, count_distinct, distinct, int_array
from .vector_search import Searching

METRICS = {"l2": faiss.METRIC_L2, "ip": faiss.METRIC_INNER_PRODUCT, "cosine": faiss.METRIC_INNER_PRODUCT}

#: ``source(chunk_ids) -> (chunk ids found, their float32 vectors)``: where a quantized index reads
#: the exact vectors of its rescoring candidates (SQLite, through storage.chunks).
RescoreSource = Callable[[np.ndarray], "tuple[np.ndarray, np.ndarray]"]


class VectorIndex(Searching):
    """The k nearest documents of a vector column, over chunks with arbitrary int64 ids."""

    def __init__(self, dims: int, metric: str, *, m: int = 16, ef_construction: int = 200,
                 quantization: str = "none") -> None:
        if metric not in METRICS:
            raise ValueError(f"unknown metric {metric!r}; expected one of {', '.join(METRICS)}")
        if dims < 1 or m < 2 or ef_construction < 1:
            raise ValueError(f"bad index parameters: dims={dims}, m={m}, ef_construction={ef_construction}")
        self.dims, self.metric, self.m, self.ef_construction = int(dims), metric, int(m), int(ef_construction)
        self.quantization = quantized.check(quantization)
        self._index = quantized.make_graph(self.dims, metric, self.m, self.ef_construction, self.quantization)
        self.rescore_source: RescoreSource | None = None
        self._set_maps(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, bool))
        self._lock = RWLock()
        self._bitmap_lock = threading.Lock()

    def _set_maps(self, chunks: np.ndarray, docs: np.ndarray, alive: np.ndarray) -> None:
        """Take these arrays (writable, int64, int64, bool, nobody else's: kept, not copied) as the maps."""
        self._chunk, self._doc, self._alive = Column.owning(chunks), Column.owning(docs), Column.owning(alive)
        self._by_chunk, self._by_doc = KeyIndex(self._chunk.view), KeyIndex(self._doc.view)
        self._live = int(np.count_nonzero(alive))
        self._live_docs = count_distinct(docs, alive)
        self._max_norm = 0.0
        self._alive_bitmap: np.ndarray | None = None
        # what searches derive from the state and keep until the next write (vector_search: the
        # vectors' view on FAISS's storage, the live chunks grouped by document); a write replaces it
        self._derived: dict[str, Any] = {}
        self._staged = np.empty((0, self.dims), np.float32)   # float32 vectors of an untrained quantized index
        self._sqnorm = Column(np.float32)                     # |x|^2 per position (ip on 1-bit codes only)

    @property
    def _float(self) -> bool:
        """True when every vector is held as float32 (no quantization, or not trained yet)."""
        return self.quantization == "none" or not self._index.is_trained

    @property
    def _total(self) -> int:
        """Positions, live or not (the graph's ntotal, or the staged vectors before training)."""
        return self._chunk.n

    # ---- writes -------------------------------------------------------------------------------

    def add(self, chunk_ids: np.ndarray, doc_ids: np.ndarray, vectors: np.ndarray) -> None:
        """Add chunks. A chunk id that is already live is replaced: its old vector becomes a tombstone."""
        chunks = np.asarray(chunk_ids, np.int64).ravel()
        docs = np.asarray(doc_ids, np.int64).ravel()
        x = self._check_vectors(vectors, len(chunks))
        if len(docs) != len(chunks):
            raise ValueError(f"{len(chunks)} chunk ids but {len(docs)} doc ids")
        if not len(chunks):
            return
        if len(distinct(chunks)) != len(chunks):
            raise ValueError("duplicate chunk ids in one add()")
        with self._lock.write():
            self._derived = {}
            self._kill(self._live_positions(self._by_chunk, np.sort(chunks)))
            batch_docs = distinct(docs)
            new_docs = len(batch_docs) - self._by_doc.live(batch_docs, self._alive.view)[1]
            start = self._total
            self._add_vectors(x)
            self._chunk.append(chunks)
            self._doc.append(docs)
            self._alive.append(np.ones(len(chunks), bool))
            self._by_chunk.append(chunks, start)
            self._by_doc.append(docs, start)
            self._live += len(chunks)
            self._live_docs += new_docs
            self._max_norm = max(self._max_norm, float(np.linalg.norm(x, axis=1).max()))
            self._alive_bitmap = None
            self._derived = {}

    @property
    def untrained(self) -> bool:
        """A quantized index whose quantizer has not been trained yet (its vectors are staged)."""
        return self.quantization != "none" and not self._index.is_trained

    def train(self, sample: np.ndarray) -> None:
        """Train the quantizer of an untrained index on ``sample`` (and what it staged), and move the
        staged vectors into the graph: a large catch-up trains on vectors spread over all it is about
        to add in pages. Nothing when trained or not quantized; the sample is not added."""
        with self._lock.write():
            if not self.untrained or not len(sample):
                return
            x = self._check_vectors(sample, len(sample))
            staged = self._staged
            quantized.train(self._index, np.concatenate([staged, x]) if len(staged) else x)
            if len(staged):
                self._index.add(staged)
            self._staged = np.empty((0, self.dims), np.float32)
            self._derived = {}

    def reserve(self, more: int) -> None:
        """Room for ``more`` vectors about to be added in pages (see ``quantized.reserve``)."""
        with self._lock.write():
            quantized.reserve(self._index, more)
            for column in (self._chunk, self._doc, self._alive, self._by_chunk, self._by_doc):
                column.reserve(more)
            self._derived = {}          # FAISS's storage and the maps may have moved

    def _add_vectors(self, x: np.ndarray) -> None:
        if self.quantization != "none" and self.metric == "ip":
            self._sqnorm.append(np.einsum("ij,ij->i", x, x).astype(np.float32))
        if self.quantization == "none" or self._index.is_trained:
            self._index.add(x)
            return
        staged = np.concatenate([self._staged, x]) if len(self._staged) else x.copy()
        if len(staged) < quantized.TRAIN_MIN:
            self._staged = staged
            return
        quantized.train(self._index, staged)
        self._index.add(staged)
        self._staged = np.empty((0, self.dims), np.float32)

    def _check_vectors(self, vectors: np.ndarray, n: int) -> np.ndarray:
        x = np.ascontiguousarray(vectors, np.float32)
        if x.shape != (n, self.dims):
            raise ValueError(f"expected vectors of shape ({n}, {self.dims}), got {x.shape}")
        if not np.isfinite(x).all():
            raise ValueError("vectors must be finite (no NaN or infinity)")
        return self._normalized(x) if self.metric == "cosine" else x

    @staticmethod
    def _normalized(x: np.ndarray) -> np.ndarray:
        """Defensive: rows not already of unit length are normalised (zero rows stay zero)."""
        norms = np.linalg.norm(x, axis=-1, keepdims=True)
        off = (np.abs(norms - 1) > 1e-4) & (norms > 0)
        if not off.any():
            return x
        return np.where(off, x / np.where(norms > 0, norms, 1), x).astype(np.float32)

    def remove_docs(self, doc_ids: Iterable[int]) -> None:
        """Tombstone every chunk of these documents. Unknown ids are ignored."""
        with self._lock.write():
            self._kill(self._live_positions(self._by_doc, int_array(doc_ids)))

    def remove_chunks(self, chunk_ids: Iterable[int]) -> None:
        """Tombstone these chunks. Unknown ids are ignored."""
        with self._lock.write():
            self._kill(self._live_positions(self._by_chunk, int_array(chunk_ids)))

    def _live_positions(self, keys: KeyIndex, wanted: np.ndarray) -> np.ndarray:
        """Live positions whose key is in ``wanted`` (sorted, distinct)."""
        return keys.live(wanted, self._alive.view)[0]

    def _kill(self, pos: np.ndarray) -> None:
        if not len(pos):
            return
        docs = distinct(self._doc.view[pos])
        self._alive.view[pos] = False
        self._live -= len(pos)
        self._live_docs -= len(docs) - self._by_doc.live(docs, self._alive.view)[1]
        self._alive_bitmap = None
        self._derived = {}

    # ---- reads --------------------------------------------------------------------------------

    def chunk_ids(self) -> np.ndarray:
        """Live chunk ids, in the order they were added."""
        with self._lock.read():
            return self._chunk.view[self._alive.view].copy()

    def __len__(self) -> int:
        return self._live

    @property
    def live_docs(self) -> int:
        """Documents with at least one live chunk."""
        return self._live_docs

    @property
    def tombstones(self) -> int:
        """Removed chunks still in the graph (``compact()`` drops them)."""
        return self._total - self._live

    def footprint(self) -> dict[str, int]:
        """Bytes held in memory: vectors or codes, graph links, and the id maps."""
        with self._lock.read():
            codes = quantized.code_bytes(self._index) if self._index.ntotal else 0
            return {"vectors": codes + self._staged.nbytes, "links": quantized.link_bytes(self._index),
                    "maps": sum(c.nbytes for c in (self._chunk, self._doc, self._alive, self._by_chunk,
                                                    self._by_doc, self._sqnorm))}

    def _vectors(self) -> np.ndarray:
        """All float32 vectors, as a view on FAISS's storage or the staging array (valid under the lock).
        Only while ``self._float``. The view is kept until the next write (FAISS's storage may move
        when vectors are added)."""
        if self.quantization != "none":
            return self._staged
        xb = self._derived.get("xb")
        if xb is None:
            n = self._index.ntotal
            if not n:
                return np.empty((0, self.dims), np.float32)
            flat = faiss.downcast_index(self._index.storage)
            xb = faiss.rev_swig_ptr(flat.get_xb(), n * self.dims).reshape(n, self.dims)
            self._derived["xb"] = xb
        return xb

    # ---- maintenance and persistence ----------------------------------------------------------

    def compact(self) -> VectorIndex:
        """A new index holding only the live chunks (the graph rebuilt and, when quantized, the
        quantizer trained again from the exact vectors); this one is unchanged."""
        with self._lock.read():
            fresh = VectorIndex(self.dims, self.metric, m=self.m, ef_construction=self.ef_construction,
                                quantization=self.quantization)
            fresh.rescore_source = self.rescore_source
            pos = np.flatnonzero(self._alive.view)
            if not len(pos):
                return fresh
            chunks, docs = self._chunk.view[pos], self._doc.view[pos]
            if self._float:
                fresh.add(chunks, docs, self._vectors()[pos])
                return fresh
        found, x = self._exact_vectors(chunks, "be rebuilt")
        at = ranking.locate(chunks, found)
        fresh.add(found[at >= 0], docs[at[at >= 0]], x[at >= 0])
        return fresh

    def _exact_vectors(self, chunks: np.ndarray, why: str) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids found, their float32 vectors) from ``rescore_source`` (SQLite, in the engine)."""
        if self.rescore_source is None:
            raise ValueError(f"a quantized index needs a rescore_source to {why}")
        found, x = self.rescore_source(chunks)
        found = np.asarray(found, np.int64)
        x = np.asarray(x, np.float32).reshape(len(found), self.dims)
        return found, self._normalized(x) if self.metric == "cosine" else x

    def save(self, target: Any, watermark: str) -> None:
        """Write the index (see ``vector_file``) to ``target``: a stream of ``index_cache`` (inside the
        database), or a file path (temp file, fsync, rename, fsync of the folder)."""
        with self._lock.read():
            vector_file.save(self, target, watermark)

    @classmethod
    def load(cls, source: Any) -> tuple[VectorIndex, str] | None:
        """``(index, watermark)`` from a file path or an ``index_cache`` stream; None when no file
        exists; IndexCorrupt when it cannot be trusted."""
        return vector_file.load(cls, source)

    def _adopt(self, graph: faiss.Index, chunks: np.ndarray, docs: np.ndarray, alive: np.ndarray,
               max_norm: float, path: str) -> None:
        q = self.quantization
        if (not quantized.matches(graph, q) or graph.d != self.dims
                or graph.metric_type != quantized.faiss_metric(self.metric, q)):
            raise IndexCorrupt(path, "the graph does not match the header")
        graph.hnsw.efConstruction = self.ef_construction
        quantized.prepare(graph, q)
        self._index = graph
        self._set_maps(chunks, docs, alive)
        self._max_norm = max_norm
