"""One FAISS HNSW index per vector column: the derived cache that answers ``knn()``.

SQLite holds every chunk vector; this index holds a graph over the same vectors so that the k nearest
*documents* can be found quickly. Vectors live at dense *positions* 0..n-1 (the order they were
added, which is FAISS's own numbering); two arrays map a position to its chunk id and doc id, and a
third says whether it is still alive. A delete only clears ``alive`` (HNSW has no removal,
faiss#3339); searches exclude dead positions with an ``IDSelectorBitmap``, and ``compact()`` rebuilds.

Concurrency: any number of threads may call the read methods (``search``, ``explain``, ``save``,
``compact``, ``chunk_ids``, ``len``) at once; ``add``/``remove_*`` take the lock exclusively and wait
for running searches. See docs/vector_index.md for the design and the measured thresholds.

With ``quantization`` ('8bit', '1bit', '1bitsimple'; see ``quantized``) the graph holds codes, not
float32 vectors: a search takes ``k * oversampling`` candidate documents from the codes and, with
``rescore`` (the default), ranks them by their exact distances, computed from the float32 vectors
that ``rescore_source`` reads from SQLite.
"""
from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable
from typing import Any

import faiss
import numpy as np

from . import index_file, quantized, ranking
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
# Quantized indexes: candidate documents = k * this. 8bit keeps Manticore's 3.0; 1-bit codes rank too
# coarsely for that (recall@10 0.75 at 100k, 0.44 at 1M): 10 gave 0.995 at 100k (bench_quantize_index.py).
# 1bit: 20 finds 0.961 of the true top 10 at 1M x 384 (10: 0.879, 3: 0.44; docs/benchmarks.md#one-file)
OVERSAMPLING = {"none": 1.0, "8bit": 3.0, "1bit": 20.0, "1bitsimple": 10.0}

#: ``source(chunk_ids) -> (chunk ids found, their float32 vectors)``: where a quantized index reads
#: the exact vectors of its rescoring candidates (SQLite, through storage.chunks).
RescoreSource = Callable[[np.ndarray], "tuple[np.ndarray, np.ndarray]"]


class VectorIndex:
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
        self._chunk, self._doc, self._alive = Column(np.int64, chunks), Column(np.int64, docs), Column(bool, alive)
        self._by_chunk, self._by_doc = KeyIndex(self._chunk.view), KeyIndex(self._doc.view)
        self._live = int(alive.sum())
        self._live_docs = len(distinct(docs[alive]))
        self._max_norm = 0.0
        self._alive_bitmap: np.ndarray | None = None
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

    def search(self, query: np.ndarray, k: int, *, allowed_docs: np.ndarray | None = None,
               exclude_doc: int | None = None, ef: int | None = None, rescore: bool = True,
               oversampling: float | None = None) -> list[tuple[int, float, int]]:
        """The k nearest documents as ``(doc_id, distance, chunk_id)``, by distance then doc id.

        A document's distance is that of its closest live chunk. With ``allowed_docs`` only those
        documents are considered (a prefilter); ``exclude_doc`` is never returned. On a quantized
        index, ``k * oversampling`` candidate documents come from the codes and, with ``rescore``,
        are ranked by their exact distances (else by the codes' approximate ones).
        """
        q = self._check_query(query)
        with self._lock.read():
            plan = self._plan(k, allowed_docs, exclude_doc, ef, oversampling)
            plan.rescore = rescore
            if plan.want == 0:
                return []
            if plan.path == "exact":
                return self._search_exact(q, plan)
            return self._search_graph(q, plan)

    def explain(self, k: int, *, allowed_docs: np.ndarray | None = None, exclude_doc: int | None = None,
                ef: int | None = None, rescore: bool = True, oversampling: float | None = None) -> dict[str, Any]:
        """How ``search`` would run, without running it."""
        with self._lock.read():
            p = self._plan(k, allowed_docs, exclude_doc, ef, oversampling)
            out = {"path": p.path, "candidates": p.n_candidates if allowed_docs is not None else None,
                   "candidate_docs": p.want_docs, "ef": p.ef, "fetch": p.fetch, "exact_max_chunks": p.exact_max,
                   "live_chunks": self._live, "live_docs": self._live_docs, "tombstones": self.tombstones}
            if self.quantization != "none":
                out.update(quantization=self.quantization, trained=not self._float, rescore=int(rescore),
                           oversampling=p.oversampling, shortlist_docs=p.shortlist)
            return out

    def _check_query(self, query: np.ndarray) -> np.ndarray:
        q = np.asarray(query, np.float32)
        if q.size != self.dims or q.ndim > 2:
            raise ValueError(f"expected a query vector of {self.dims} values, got shape {q.shape}")
        q = np.ascontiguousarray(q.reshape(1, self.dims))
        if not np.isfinite(q).all():
            raise ValueError("the query vector must be finite")
        return self._normalized(q) if self.metric == "cosine" else q

    def _plan(self, k: int, allowed_docs: np.ndarray | None, exclude_doc: int | None, ef: int | None,
              oversampling: float | None = None) -> _Plan:
        if k < 1:
            raise ValueError(f"k must be positive, got {k}")
        if ef is not None and ef < 0:
            raise ValueError(f"ef must be non-negative, got {ef}")
        if oversampling is not None and not oversampling >= 1.0:
            raise ValueError(f"oversampling must be >= 1.0, got {oversampling}")
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
        # Oversampling widens the candidate documents: by default only on quantized codes (float32
        # distances are exact already), as asked on any index (Manticore's meaning).
        default = OVERSAMPLING.get(self.quantization, 3.0)
        plan.oversampling = float(oversampling) if oversampling is not None else default
        plan.shortlist = min(docs, math.ceil(plan.want * plan.oversampling))
        chunks_per_doc = plan.n_candidates / docs if docs else 1.0
        plan.fetch = min(plan.n_candidates, math.ceil(plan.shortlist * chunks_per_doc))
        # The graph holds dead and filtered-out nodes too: to meet `base` allowed ones, look at base / s.
        selectivity = plan.n_candidates / max(self._total, 1)
        base = max(ef or 0, EF_FLOOR, EF_PER_CHUNK * plan.fetch)
        plan.ef = int(min(math.ceil(base / max(selectivity, 1e-9)), EF_MAX))
        # A graph search computes about ef * 2m distances; brute force computes one per candidate chunk.
        plan.exact_max = max(EXACT_MIN_CHUNKS, int(EXACT_COST_RATIO * plan.ef * 2 * self.m))
        exact = plan.n_candidates <= plan.exact_max or not self._index.is_trained
        plan.path = "exact" if exact else "graph"
        return plan

    def _vectors(self) -> np.ndarray:
        """All float32 vectors, as a view on FAISS's storage or the staging array (valid under the lock).
        Only while ``self._float``."""
        if self.quantization != "none":
            return self._staged
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
        if self._float:
            return self._finish(q, pos, self._distances32(q, pos), plan.shortlist, plan.want)
        raw = quantized.code_distances(self._index, q, pos, self.quantization)
        return self._finish_codes(q, pos, raw, plan)

    def _finish(self, q: np.ndarray, pos: np.ndarray, approx: np.ndarray, shortlist: int,
                k: int) -> list[tuple[int, float, int]]:
        """From chunks with float32 distances to the k best documents, rescored in float64.

        Only the chunks whose own float32 distance is within rounding of the cut (the ``shortlist``-th
        best document) are rescored, so float32 error cannot change which documents make the cut
        nor which chunk is a document's closest, and a long document near the cut costs only the
        few chunks of it that are near too.
        """
        scale = 0.0 if self.metric == "l2" else float(np.linalg.norm(q)) * self._max_norm
        keep = ranking.near_cut(self._doc.view[pos], approx, shortlist, RESCORE_TOL, scale)
        return self._rank(q, pos[keep], k)

    def _distances32(self, q: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """float32 distances from q to the vectors at ``pos``, read in place (no gathered copy)."""
        xb = self._vectors()
        n = len(xb)
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
        sel = None if bitmap is None else faiss.IDSelectorBitmap(self._total, faiss.swig_ptr(bitmap))
        fetch, ef = max(plan.fetch, 1), plan.ef
        while True:
            params = faiss.SearchParametersHNSW(efSearch=ef)
            if sel is not None:
                params.sel = sel
            with one_thread():
                dist, found = self._index.search(q, fetch, params=params)
            hit = found[0] >= 0
            pos = found[0][hit]
            if len(distinct(self._doc.view[pos])) >= plan.shortlist:
                if not self._float:
                    return self._finish_codes(q, pos, dist[0][hit], plan)
                approx = dist[0][hit] if self.metric == "l2" else 1.0 - dist[0][hit]
                return self._finish(q, pos, approx, plan.shortlist, plan.want)
            if fetch >= plan.n_candidates:
                break
            fetch, ef = min(2 * fetch, plan.n_candidates), min(2 * ef, EF_MAX)
        # The graph could not reach enough documents (rare: tiny allowed sets spread thin). Be exact.
        return self._search_exact(q, plan)

    def _selector_bitmap(self, plan: _Plan) -> np.ndarray | None:
        """Bit i set when position i may be returned; None when every position may."""
        if plan.positions is not None:
            mask = np.zeros(self._total, bool)
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
        mask = np.unpackbits(bitmap, count=self._total, bitorder="little").astype(bool)
        mask[plan.excluded] = False
        return np.packbits(mask, bitorder="little")

    def _rank(self, q: np.ndarray, pos: np.ndarray, k: int) -> list[tuple[int, float, int]]:
        """Rescore ``pos`` in float64, keep each document's closest chunk, return the k best."""
        dist = ranking.distances64(self._vectors()[pos], q[0], self.metric)
        docs, chunks = self._doc.view[pos], self._chunk.view[pos]
        return [(int(docs[i]), float(dist[i]), int(chunks[i])) for i in ranking.top_docs(docs, chunks, dist, k)]

    def _finish_codes(self, q: np.ndarray, pos: np.ndarray, raw: np.ndarray,
                      plan: _Plan) -> list[tuple[int, float, int]]:
        """Quantized: the shortlist of documents by code distance, then (rescore) exact distances."""
        sqnorm = self._sqnorm.view[pos] if self._sqnorm.n else None
        approx = quantized.to_metric(raw, self.metric, self.quantization, sqnorm, q)
        docs, chunks = self._doc.view[pos], self._chunk.view[pos]
        if not plan.rescore:
            return [(int(docs[i]), float(approx[i]), int(chunks[i]))
                    for i in ranking.top_docs(docs, chunks, approx, plan.want)]
        short = ranking.top_docs(docs, chunks, approx, plan.shortlist)
        pick = np.isin(docs, docs[short])
        return self._rescore(q, docs[pick], chunks[pick], plan.want)

    def _rescore(self, q: np.ndarray, docs: np.ndarray, chunks: np.ndarray, k: int) -> list[tuple[int, float, int]]:
        found, x = self._exact_vectors(chunks, "rescore")
        at = ranking.locate(chunks, found)
        ok = at >= 0
        dist = ranking.distances64(x[ok], q[0], self.metric)
        d, c = docs[at[ok]], found[ok]
        return [(int(d[i]), float(dist[i]), int(c[i])) for i in ranking.top_docs(d, c, dist, k)]

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
        """Write the index (see ``index_file``) to ``target``: a stream of ``index_cache`` (inside the
        database), or a file path (temp file, fsync, rename, fsync of the folder)."""
        with self._lock.read():
            arrays = [self._chunk.view.tobytes(), self._doc.view.tobytes(),
                      np.packbits(self._alive.view, bitorder="little").tobytes(),
                      self._staged.tobytes(), self._sqnorm.view.tobytes()]
            header = {"dims": self.dims, "metric": self.metric, "m": self.m,
                      "ef_construction": self.ef_construction, "watermark": watermark,
                      "count": self._total, "max_norm": self._max_norm, "quantization": self.quantization,
                      "staged": len(self._staged), "sqnorms": self._sqnorm.n}
            save = index_file.save if isinstance(target, str) else index_file.save_stream
            save(target, header, arrays, self._index)

    @classmethod
    def load(cls, source: Any) -> tuple[VectorIndex, str] | None:
        """``(index, watermark)`` from a file path or an ``index_cache`` stream; None when no file
        exists; IndexCorrupt when it cannot be trusted."""
        if isinstance(source, str):
            path, loaded = source, index_file.load(source, _array_sizes)
        else:
            path = source.name
            loaded = index_file.load_stream(source, source.size, path, _array_sizes)
        if loaded is None:
            return None
        header, arrays, graph = loaded
        try:
            index = cls(int(header["dims"]), str(header["metric"]), m=int(header["m"]),
                        ef_construction=int(header["ef_construction"]),
                        quantization=str(header.get("quantization", "none")))
            watermark = str(header["watermark"])
        except (KeyError, TypeError, ValueError) as e:
            raise IndexCorrupt(path, f"bad header: {e}") from e
        n = int(header["count"])
        chunks = np.frombuffer(arrays[0], np.int64).copy()
        docs = np.frombuffer(arrays[1], np.int64).copy()
        alive = np.unpackbits(np.frombuffer(arrays[2], np.uint8), count=n, bitorder="little").astype(bool)
        index._adopt(graph, chunks, docs, alive, float(header.get("max_norm", 0.0)), path)
        if len(arrays) > 3:
            index._staged = np.frombuffer(arrays[3], np.float32).reshape(-1, index.dims).copy()
            index._sqnorm = Column(np.float32, np.frombuffer(arrays[4], np.float32))
        if index._index.ntotal + len(index._staged) != n or index._sqnorm.n not in (0, n):
            raise IndexCorrupt(path, "the vectors do not match the header")
        return index, watermark

    def _adopt(self, graph: faiss.Index, chunks: np.ndarray, docs: np.ndarray, alive: np.ndarray,
               max_norm: float, path: str) -> None:
        q = self.quantization
        if (type(graph) is not quantized.GRAPH_TYPES[q] or graph.d != self.dims
                or graph.metric_type != quantized.faiss_metric(self.metric, q)):
            raise IndexCorrupt(path, "the graph does not match the header")
        graph.hnsw.efConstruction = self.ef_construction
        quantized.prepare(graph, q)
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
    shortlist = 0  # candidate documents: want * oversampling
    oversampling = 1.0
    rescore = True
    fetch = 0
    ef = 0
    exact_max = 0


def _array_sizes(header: dict[str, Any]) -> list[int]:
    """Bytes of the saved arrays: chunk ids, doc ids (int64 each), alive bits; then (files written
    since quantization) the staged float32 vectors of an untrained quantized index and the squared
    norms kept for ip on 1-bit codes."""
    n = int(header["count"])
    if n < 0:
        return [-1]
    sizes = [8 * n, 8 * n, (n + 7) // 8]
    if "staged" in header:
        sizes += [4 * int(header["dims"]) * int(header["staged"]), 4 * int(header["sqnorms"])]
    return sizes
