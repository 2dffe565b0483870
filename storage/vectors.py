"""One FAISS HNSW index per vector column: the derived cache that answers ``knn()``.

SQLite holds every chunk vector; this index holds a graph over the same vectors so that the k nearest
*documents* can be found quickly. Vectors live at dense *positions* 0..n-1 (the order they were
added, which is FAISS's own numbering); two arrays map a position to its chunk id and doc id, and a
third says whether it is still alive. A delete only clears ``alive`` (HNSW has no removal,
faiss#3339); searches exclude dead positions with an ``IDSelectorBitmap``, and ``compact()`` rebuilds.

Concurrency: any number of threads may call the read methods (``search``, ``explain``, ``save``,
``compact``, ``chunk_ids``, ``len``) at once; ``add``/``remove_*`` take the lock exclusively and wait
for running searches. See docs/vector_index.md for the design and the measured thresholds.
"""
from __future__ import annotations

import math
import threading
from collections.abc import Iterable
from typing import Any

import faiss
import numpy as np

from . import index_file
from .errors import IndexCorrupt
from .positions import Column, KeyIndex, RWLock, distinct, int_array, one_thread

METRICS = {"l2": faiss.METRIC_L2, "ip": faiss.METRIC_INNER_PRODUCT, "cosine": faiss.METRIC_INNER_PRODUCT}

# Search tuning; the numbers were chosen by measurement (tests/benchmarks/bench_vectors.py, docs).
EXACT_MIN_CHUNKS = 2048  # at or below this many candidate chunks, always search exactly
EXACT_COST_RATIO = 0.8  # brute force over C chunks costs about as much as a graph search of ef * 2m * ratio >= C
EF_FLOOR = 48  # smallest efSearch used
EF_PER_CHUNK = 2  # efSearch >= this many times the chunks asked for
EF_MAX = 1 << 16
RESCORE_TOL = 1e-4  # relative float32 error allowed for before the float64 rescoring


class VectorIndex:
    """The k nearest documents of a vector column, over chunks with arbitrary int64 ids."""

    def __init__(self, dims: int, metric: str, *, m: int = 16, ef_construction: int = 200) -> None:
        if metric not in METRICS:
            raise ValueError(f"unknown metric {metric!r}; expected one of {', '.join(METRICS)}")
        if dims < 1 or m < 2 or ef_construction < 1:
            raise ValueError(f"bad index parameters: dims={dims}, m={m}, ef_construction={ef_construction}")
        self.dims, self.metric, self.m, self.ef_construction = int(dims), metric, int(m), int(ef_construction)
        self._index = faiss.IndexHNSWFlat(self.dims, self.m, METRICS[metric])
        self._index.hnsw.efConstruction = self.ef_construction
        self._set_maps(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, bool))
        self._lock = RWLock()
        self._bitmap_lock = threading.Lock()

    def _set_maps(self, chunks: np.ndarray, docs: np.ndarray, alive: np.ndarray) -> None:
        self._chunk, self._doc, self._alive = Column(np.int64, chunks), Column(np.int64, docs), Column(bool, alive)
        self._by_chunk, self._by_doc = KeyIndex(self._chunk.view), KeyIndex(self._doc.view)
        self._live = int(alive.sum())
        self._live_docs = len(distinct(docs[alive]))
        self._max_norm = 0.0
        self._alive_bitmap: np.ndarray | None = None

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
            self._kill(self._live_positions(self._by_chunk, np.sort(chunks)))
            batch_docs = distinct(docs)
            new_docs = len(batch_docs) - self._by_doc.live(batch_docs, self._alive.view)[1]
            start = self._index.ntotal
            self._index.add(x)
            self._chunk.append(chunks)
            self._doc.append(docs)
            self._alive.append(np.ones(len(chunks), bool))
            self._by_chunk.append(chunks, start)
            self._by_doc.append(docs, start)
            self._live += len(chunks)
            self._live_docs += new_docs
            self._max_norm = max(self._max_norm, float(np.linalg.norm(x, axis=1).max()))
            self._alive_bitmap = None

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
        return self._index.ntotal - self._live

    def search(self, query: np.ndarray, k: int, *, allowed_docs: np.ndarray | None = None,
               exclude_doc: int | None = None, ef: int | None = None) -> list[tuple[int, float, int]]:
        """The k nearest documents as ``(doc_id, distance, chunk_id)``, by distance then doc id.

        A document's distance is that of its closest live chunk. With ``allowed_docs`` only those
        documents are considered (a prefilter); ``exclude_doc`` is never returned.
        """
        q = self._check_query(query)
        with self._lock.read():
            plan = self._plan(k, allowed_docs, exclude_doc, ef)
            if plan.want == 0:
                return []
            if plan.path == "exact":
                return self._search_exact(q, plan)
            return self._search_graph(q, plan)

    def explain(self, k: int, *, allowed_docs: np.ndarray | None = None, exclude_doc: int | None = None,
                ef: int | None = None) -> dict[str, Any]:
        """How ``search`` would run, without running it."""
        with self._lock.read():
            p = self._plan(k, allowed_docs, exclude_doc, ef)
            return {"path": p.path, "candidates": p.n_candidates if allowed_docs is not None else None,
                    "candidate_docs": p.want_docs, "ef": p.ef, "fetch": p.fetch, "exact_max_chunks": p.exact_max,
                    "live_chunks": self._live, "live_docs": self._live_docs, "tombstones": self.tombstones}

    def _check_query(self, query: np.ndarray) -> np.ndarray:
        q = np.asarray(query, np.float32)
        if q.size != self.dims or q.ndim > 2:
            raise ValueError(f"expected a query vector of {self.dims} values, got shape {q.shape}")
        q = np.ascontiguousarray(q.reshape(1, self.dims))
        if not np.isfinite(q).all():
            raise ValueError("the query vector must be finite")
        return self._normalized(q) if self.metric == "cosine" else q

    def _plan(self, k: int, allowed_docs: np.ndarray | None, exclude_doc: int | None, ef: int | None) -> _Plan:
        if k < 1:
            raise ValueError(f"k must be positive, got {k}")
        if ef is not None and ef < 0:
            raise ValueError(f"ef must be non-negative, got {ef}")
        plan = _Plan()
        if allowed_docs is None:
            plan.n_candidates, docs = self._live, self._live_docs
            if exclude_doc is not None:
                gone = self._live_positions(self._by_doc, np.array([exclude_doc], np.int64))
                plan.excluded, plan.n_candidates, docs = gone, self._live - len(gone), docs - (len(gone) > 0)
        else:
            wanted = int_array(allowed_docs)
            if exclude_doc is not None:
                wanted = wanted[wanted != exclude_doc]
            plan.positions, docs = self._by_doc.live(wanted, self._alive.view)
            plan.n_candidates = len(plan.positions)
        plan.want_docs, plan.want = docs, min(k, docs)
        chunks_per_doc = plan.n_candidates / docs if docs else 1.0
        plan.fetch = min(plan.n_candidates, math.ceil(plan.want * chunks_per_doc))
        # The graph holds dead and filtered-out nodes too: to meet `base` allowed ones, look at base / s.
        selectivity = plan.n_candidates / max(self._index.ntotal, 1)
        base = max(ef or 0, EF_FLOOR, EF_PER_CHUNK * plan.fetch)
        plan.ef = int(min(math.ceil(base / max(selectivity, 1e-9)), EF_MAX))
        # A graph search computes about ef * 2m distances; brute force computes one per candidate chunk.
        plan.exact_max = max(EXACT_MIN_CHUNKS, int(EXACT_COST_RATIO * plan.ef * 2 * self.m))
        plan.path = "exact" if plan.n_candidates <= plan.exact_max else "graph"
        return plan

    def _vectors(self) -> np.ndarray:
        """All stored vectors, as a view on FAISS's own storage (valid while the lock is held)."""
        n = self._index.ntotal
        if not n:
            return np.empty((0, self.dims), np.float32)
        flat = faiss.downcast_index(self._index.storage)
        return faiss.rev_swig_ptr(flat.get_xb(), n * self.dims).reshape(n, self.dims)

    def _candidates(self, plan: _Plan) -> np.ndarray:
        if plan.positions is not None:
            return plan.positions
        pos = np.flatnonzero(self._alive.view)
        return pos if plan.excluded is None else np.setdiff1d(pos, plan.excluded, assume_unique=True)

    def _search_exact(self, q: np.ndarray, plan: _Plan) -> list[tuple[int, float, int]]:
        pos = self._candidates(plan)
        return self._finish(q, pos, self._distances32(q, pos), plan.want)

    def _finish(self, q: np.ndarray, pos: np.ndarray, approx: np.ndarray, k: int) -> list[tuple[int, float, int]]:
        """From chunks with float32 distances to the k best documents, rescored in float64.

        Every document whose best float32 distance is within rounding of the k-th best is rescored,
        so float32 error cannot change which documents make the cut.
        """
        docs = self._doc.view[pos]
        order = np.argsort(docs, kind="stable")
        docs_sorted = docs[order]
        starts = np.flatnonzero(np.r_[True, docs_sorted[1:] != docs_sorted[:-1]])
        best = np.minimum.reduceat(approx[order], starts)
        if len(best) > k:
            kth = float(np.partition(best, k - 1)[k - 1])
            scale = 0.0 if self.metric == "l2" else float(np.linalg.norm(q)) * self._max_norm
            keep_docs = best <= kth + RESCORE_TOL * (1.0 + abs(kth) + scale)
            keep = np.zeros(len(pos), bool)
            keep[order] = np.repeat(keep_docs, np.diff(np.r_[starts, len(pos)]))
            pos = pos[keep]
        return self._rank(q, pos, k)

    def _distances32(self, q: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """float32 distances from q to the vectors at ``pos``, read in place (no gathered copy)."""
        xb, n = self._vectors(), self._index.ntotal
        ip = self.metric != "l2"
        if 2 * len(pos) >= n:  # most of the index: one contiguous pass, then pick
            out = np.empty(n, np.float32)
            kernel = faiss.fvec_inner_products_ny if ip else faiss.fvec_L2sqr_ny
            with one_thread():
                kernel(faiss.swig_ptr(out), faiss.swig_ptr(q), faiss.swig_ptr(xb), self.dims, n)
            out = out[pos]
        else:
            out = np.empty(len(pos), np.float32)
            ids = np.ascontiguousarray(pos, np.int64)
            kernel = faiss.fvec_inner_products_by_idx if ip else faiss.fvec_L2sqr_by_idx
            with one_thread():
                kernel(faiss.swig_ptr(out), faiss.swig_ptr(q), faiss.swig_ptr(xb), faiss.swig_ptr(ids),
                       self.dims, 1, len(pos))
        return 1.0 - out if ip else out

    def _search_graph(self, q: np.ndarray, plan: _Plan) -> list[tuple[int, float, int]]:
        bitmap = self._selector_bitmap(plan)
        sel = None if bitmap is None else faiss.IDSelectorBitmap(self._index.ntotal, faiss.swig_ptr(bitmap))
        fetch, ef = max(plan.fetch, 1), plan.ef
        while True:
            params = faiss.SearchParametersHNSW(efSearch=ef)
            if sel is not None:
                params.sel = sel
            with one_thread():
                dist, found = self._index.search(q, fetch, params=params)
            hit = found[0] >= 0
            pos = found[0][hit]
            if len(distinct(self._doc.view[pos])) >= plan.want:
                approx = dist[0][hit] if self.metric == "l2" else 1.0 - dist[0][hit]
                return self._finish(q, pos, approx, plan.want)
            if fetch >= plan.n_candidates:
                break
            fetch, ef = min(2 * fetch, plan.n_candidates), min(2 * ef, EF_MAX)
        # The graph could not reach enough documents (rare: tiny allowed sets spread thin). Be exact.
        return self._search_exact(q, plan)

    def _selector_bitmap(self, plan: _Plan) -> np.ndarray | None:
        """Bit i set when position i may be returned; None when every position may."""
        if plan.positions is not None:
            mask = np.zeros(self._index.ntotal, bool)
            mask[plan.positions] = True
            return np.packbits(mask, bitorder="little")
        if plan.excluded is None and not self.tombstones:
            return None
        with self._bitmap_lock:
            if self._alive_bitmap is None:
                self._alive_bitmap = np.packbits(self._alive.view, bitorder="little")
            bitmap = self._alive_bitmap
        if plan.excluded is None or not len(plan.excluded):
            return bitmap
        mask = np.unpackbits(bitmap, count=self._index.ntotal, bitorder="little").astype(bool)
        mask[plan.excluded] = False
        return np.packbits(mask, bitorder="little")

    def _rank(self, q: np.ndarray, pos: np.ndarray, k: int) -> list[tuple[int, float, int]]:
        """Rescore ``pos`` in float64, keep each document's closest chunk, return the k best."""
        x = self._vectors()[pos].astype(np.float64)
        q64 = q[0].astype(np.float64)
        if self.metric == "l2":
            dist = ((x - q64) ** 2).sum(axis=1)
        else:
            dist = 1.0 - (x * q64).sum(axis=1)
        docs, chunks = self._doc.view[pos], self._chunk.view[pos]
        order = np.lexsort((chunks, dist, docs))
        firsts = order[np.r_[True, docs[order][1:] != docs[order][:-1]]]
        ranked = firsts[np.lexsort((docs[firsts], dist[firsts]))][:k]
        return [(int(docs[i]), float(dist[i]), int(chunks[i])) for i in ranked]

    # ---- maintenance and persistence ----------------------------------------------------------

    def compact(self) -> VectorIndex:
        """A new index holding only the live chunks (the graph rebuilt); this one is unchanged."""
        with self._lock.read():
            alive = self._alive.view
            fresh = VectorIndex(self.dims, self.metric, m=self.m, ef_construction=self.ef_construction)
            pos = np.flatnonzero(alive)
            if len(pos):
                fresh.add(self._chunk.view[pos], self._doc.view[pos], self._vectors()[pos])
            return fresh

    def save(self, path: str, watermark: str) -> None:
        """Write the index atomically (see ``index_file``): temp file, fsync, rename, fsync of the folder."""
        with self._lock.read():
            arrays = [self._chunk.view.tobytes(), self._doc.view.tobytes(),
                      np.packbits(self._alive.view, bitorder="little").tobytes()]
            header = {"dims": self.dims, "metric": self.metric, "m": self.m,
                      "ef_construction": self.ef_construction, "watermark": watermark,
                      "count": self._index.ntotal, "max_norm": self._max_norm}
            index_file.save(path, header, arrays, self._index)

    @classmethod
    def load(cls, path: str) -> tuple[VectorIndex, str] | None:
        """``(index, watermark)``, or None when no file exists; IndexCorrupt when it cannot be trusted."""
        loaded = index_file.load(path, _array_sizes)
        if loaded is None:
            return None
        header, (chunk_bytes, doc_bytes, bits), graph = loaded
        try:
            index = cls(int(header["dims"]), str(header["metric"]), m=int(header["m"]),
                        ef_construction=int(header["ef_construction"]))
            watermark = str(header["watermark"])
        except (KeyError, TypeError, ValueError) as e:
            raise IndexCorrupt(path, f"bad header: {e}") from e
        n = int(header["count"])
        chunks = np.frombuffer(chunk_bytes, np.int64).copy()
        docs = np.frombuffer(doc_bytes, np.int64).copy()
        alive = np.unpackbits(np.frombuffer(bits, np.uint8), count=n, bitorder="little").astype(bool)
        index._adopt(graph, chunks, docs, alive, float(header.get("max_norm", 0.0)), path)
        return index, watermark

    def _adopt(self, graph: faiss.Index, chunks: np.ndarray, docs: np.ndarray, alive: np.ndarray,
               max_norm: float, path: str) -> None:
        if (not isinstance(graph, faiss.IndexHNSWFlat) or graph.d != self.dims or graph.ntotal != len(chunks)
                or graph.metric_type != METRICS[self.metric]):
            raise IndexCorrupt(path, "the graph does not match the header")
        graph.hnsw.efConstruction = self.ef_construction
        self._index = graph
        self._set_maps(chunks, docs, alive)
        self._max_norm = max_norm


class _Plan:
    """How one search runs (see ``VectorIndex._plan``)."""

    path = "exact"
    positions: np.ndarray | None = None  # live candidate positions when filtered
    excluded: np.ndarray | None = None  # live positions of exclude_doc when unfiltered
    n_candidates = 0
    want_docs = 0
    want = 0
    fetch = 0
    ef = 0
    exact_max = 0


def _array_sizes(header: dict[str, Any]) -> list[int]:
    """Bytes of the saved arrays: chunk ids, doc ids (int64 each), alive bits."""
    n = int(header["count"])
    return [8 * n, 8 * n, (n + 7) // 8] if n >= 0 else [-1]
