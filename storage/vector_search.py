"""Searching a vector index: the k nearest documents, exactly or through the HNSW graph.

``Searching`` is the read half of ``VectorIndex`` (storage/vectors.py holds the state and the writes):
``search`` finds the candidates and sizes the search (``vector_plan``), then runs it exactly (one pass
over the candidates' float32 vectors or codes; every live chunk of a large cosine or ip index first
through ``int8_scan``'s 8-bit pass, with an exact bound) or through the graph (an ``IDSelectorBitmap`` keeps dead
and filtered-out positions out), and ranks documents by their closest chunk in float64
(``ranking``); a quantized index takes a shortlist from its codes and rescores it with the exact
vectors SQLite holds. Every method here runs under the index's read lock.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import faiss
import numpy as np

from . import int8_scan, quantized, ranking, vector_plan
from .positions import distinct, int_array, one_thread
from .vector_plan import EF_MAX, Plan

if TYPE_CHECKING:
    from .positions import Column, KeyIndex, RWLock


class Searching:
    """The search methods of ``VectorIndex`` (a mixin: the attributes below are ``VectorIndex``'s)."""

    dims: int
    metric: str
    m: int
    quantization: str
    _index: Any
    _lock: RWLock
    _chunk: Column
    _doc: Column
    _alive: Column
    _by_doc: KeyIndex
    _sqnorm: Column
    _live: int
    _live_docs: int
    _max_norm: float
    _alive_bitmap: np.ndarray | None
    _derived: dict[str, Any]

    def search(self, query: np.ndarray, k: int, *, allowed_docs: np.ndarray | None = None,
               exclude_doc: int | None = None, ef: int | None = None, rescore: bool = True,
               oversampling: float | None = None) -> list[tuple[int, float, int]]:
        """The k nearest documents as ``(doc_id, distance, chunk_id)``, by distance then doc id.

        A document's distance is that of its closest live chunk. With ``allowed_docs`` only those
        documents are considered (a prefilter); ``exclude_doc`` is never returned. On a quantized
        index, ``k * oversampling`` candidate documents come from the codes and, with ``rescore``,
        are ranked by their exact distances (else by the codes' approximate ones).
        """
        q, scale = self._query_and_scale(query)
        with self._lock.read():
            if allowed_docs is None and exclude_doc is None:
                live = self._live_sizes(k, ef, oversampling)
                if live:            # the common knn(): every live float32 vector, scanned
                    return self._scan_live(q, scale, *live)
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

    def _query_and_scale(self, query: np.ndarray) -> tuple[np.ndarray, float]:
        """The query as one contiguous float32 row (of unit length on a cosine index), and its
        ``_scale``: from the same dot product when the row is returned as given."""
        q = np.asarray(query, np.float32)
        if q.size != self.dims or q.ndim > 2:
            raise ValueError(f"expected a query vector of {self.dims} values, got shape {q.shape}")
        q = np.ascontiguousarray(q.reshape(1, self.dims))
        dot = np.dot(q[0], q[0])
        sq = float(dot)         # not finite when a value is not (or when finite ones overflow)
        if not math.isfinite(sq) and not np.isfinite(q).all():
            raise ValueError("the query vector must be finite")
        if self.metric != "cosine" or abs(math.sqrt(sq) - 1.0) <= 0.5e-4:
            # a unit vector already: within half of _normalized's tolerance, whatever the rounding
            return q, 0.0 if self.metric == "l2" else float(np.sqrt(dot)) * self._max_norm
        q = self._normalized(q)
        return q, self._scale(q)

    def _plan(self, k: int, allowed_docs: np.ndarray | None, exclude_doc: int | None, ef: int | None,
              oversampling: float | None = None) -> Plan:
        """The candidates (every live chunk, or the allowed documents' ones, less ``exclude_doc``'s),
        then the search sized for them (``vector_plan.size``)."""
        if allowed_docs is None and exclude_doc is None:
            # the common knn(): the same sizing for every query until the next write, which clears it
            key = ("plan", k, ef, oversampling)
            kept = self._derived.get(key)
            if kept is None:
                kept = self._derived[key] = self._sized(k, None, None, ef, oversampling)
            plan = Plan()
            plan.__dict__.update(kept.__dict__)     # a copy: the search sets its own rescore
            return plan
        return self._sized(k, allowed_docs, exclude_doc, ef, oversampling)

    def _live_sizes(self, k: int, ef: int | None, oversampling: float | None) -> tuple[int, int] | tuple[()]:
        """(want, shortlist) when a search of every live chunk scans float32 vectors (``_scan_live``),
        else (): kept until the next write, as ``_plan``'s sizing is."""
        key = ("live", k, ef, oversampling)
        live = self._derived.get(key)
        if live is None:
            plan = self._plan(k, None, None, ef, oversampling)
            live = (plan.want, plan.shortlist) if plan.want and plan.path == "exact" and self._float else ()
            self._derived[key] = live
        return live

    def _sized(self, k: int, allowed_docs: np.ndarray | None, exclude_doc: int | None, ef: int | None,
               oversampling: float | None) -> Plan:
        vector_plan.check(k, ef, oversampling)
        plan = Plan()
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
        return vector_plan.size(plan, docs, k, ef, oversampling, quantization=self.quantization, m=self.m,
                                total=self._total, trained=self._index.is_trained)

    def _candidates(self, plan: Plan) -> np.ndarray:
        if plan.positions is not None:
            return plan.positions
        pos = np.flatnonzero(self._alive.view)
        return pos if plan.excluded is None else np.setdiff1d(pos, plan.excluded, assume_unique=True)

    def _search_exact(self, q: np.ndarray, plan: Plan) -> list[tuple[int, float, int]]:
        if self._float and plan.positions is None and plan.excluded is None:
            return self._scan_live(q, self._scale(q), plan.want, plan.shortlist)
        pos = self._candidates(plan)
        if self._float:
            return self._finish(q, pos, self._distances32(q, pos), plan.shortlist, plan.want)
        raw = quantized.code_distances(self._index, q, pos, self.quantization)
        return self._finish_codes(q, pos, raw, plan)

    def _scan_live(self, q: np.ndarray, scale: float, want: int, shortlist: int) -> list[tuple[int, float, int]]:
        """Every live chunk (the common knn() on a table of a few thousand chunks): their grouping by
        document is kept between writes, and the scan's distances need no gather when all are live.
        ``scale``: ``_scale(q)``."""
        pos, docs, groups = self._live_groups()
        first = self._int8_pass(pos)
        if first is not None and first.worth(shortlist) and \
                int8_scan.SMALLEST <= scale <= int8_scan.LARGEST * self._max_norm:
            found = self._scan_int8(first, q, scale, want, shortlist, pos, docs, groups)
            if found is not None:
                return found
        approx = self._distances32(q, pos)
        near = ranking.near_positions(docs, approx, shortlist, vector_plan.RESCORE_TOL, scale, groups)
        return self._rank(q, near if pos is None else pos[near], want)

    def _scan_int8(self, first: int8_scan.Int8Pass, q: np.ndarray, scale: float, want: int, shortlist: int,
                   pos: np.ndarray | None, docs: np.ndarray, groups: ranking.Grouping) -> list[tuple[int, float, int]] | None:
        """``_scan_live`` through the 8-bit first pass, or None when it rules out too few chunks.

        The chunks left are those that can be the closest chunk of a document that makes the shortlist,
        with a margin of the float32 error ``near_positions`` allows for (RESCORE_TOL of 1 + |d| + scale,
        |d| <= 1 + scale) twice on each side: ranked in float64 (all of them when few, else those the
        float32 pass keeps), they give what ranking every chunk gives."""
        err = vector_plan.RESCORE_TOL * (2.0 + 2.0 * scale)
        at = int8_scan.candidates(*first.scores(q, scale / self._max_norm), groups, docs, shortlist,
                                  4.0 * err + int8_scan.ROUNDING * (1.0 + scale))
        first.saw(shortlist, len(docs) if at is None else len(at))
        if at is None or not 0 < len(at) * int8_scan.RESCAN_SHARE <= len(docs):
            return None
        cand = at if pos is None else pos[at]
        if len(at) <= int8_scan.RANK_AT_ONCE:   # few: every one in float64
            return self._rank(q, cand, want)
        near = ranking.near_positions(docs[at], self._distances32(q, cand), shortlist,
                                      vector_plan.RESCORE_TOL, scale, extent=1.0 + scale + err)
        return self._rank(q, cand[near], want)

    def _int8_pass(self, pos: np.ndarray | None) -> int8_scan.Int8Pass | None:
        """The 8-bit first pass over the live chunks (``int8_scan``): on an inner-product index of at
        least ``int8_scan.MIN_CHUNKS`` live chunks, built by the ``BUILD_AFTER``-th search since the last
        write (a table written between most of its searches keeps the float32 scan) and kept until
        the next write."""
        if self.metric == "l2" or self._live < int8_scan.MIN_CHUNKS or not self._max_norm <= int8_scan.LARGEST:
            return None
        first = self._derived.get("int8")
        if first is None:
            seen = self._derived["int8_seen"] = self._derived.get("int8_seen", 0) + 1
            if seen < int8_scan.BUILD_AFTER:
                return None
            xb = self._vectors()
            first = self._derived["int8"] = int8_scan.Int8Pass(xb if pos is None else xb[pos])
        return first if first.usable else None

    def _live_groups(self) -> tuple[np.ndarray | None, np.ndarray, ranking.Grouping]:
        """(positions of the live chunks, None when every position is live; their doc ids; their
        ``ranking.grouping``), kept until the next write."""
        groups = self._derived.get("groups")
        if groups is None:
            pos = np.flatnonzero(self._alive.view) if self._live < self._total else None
            docs = self._doc.view if pos is None else self._doc.view[pos]
            groups = self._derived["groups"] = (pos, docs, ranking.grouping(docs))
        return groups

    def _scale(self, q: np.ndarray) -> float:
        """The length scale of float32 rounding in an inner product with q (0 for l2)."""
        if self.metric == "l2":
            return 0.0
        x = q.ravel()
        return float(np.sqrt(x.dot(x))) * self._max_norm     # np.linalg.norm(q), without its checks

    def _finish(self, q: np.ndarray, pos: np.ndarray, approx: np.ndarray, shortlist: int,
                k: int) -> list[tuple[int, float, int]]:
        """From chunks with float32 distances to the k best documents, rescored in float64.

        Only the chunks whose own float32 distance is within rounding of the cut (the ``shortlist``-th
        best document) are rescored, so float32 error cannot change which documents make the cut
        nor which chunk is a document's closest, and a long document near the cut costs only the
        few chunks of it that are near too.
        """
        keep = ranking.near_cut(self._doc.view[pos], approx, shortlist, vector_plan.RESCORE_TOL, self._scale(q))
        return self._rank(q, pos[keep], k)

    def _distances32(self, q: np.ndarray, pos: np.ndarray | None) -> np.ndarray:
        """float32 distances from q to the vectors at ``pos`` (None: at every position), read in place
        (no gathered copy)."""
        xb = self._vectors()
        n = len(xb)
        ip = self.metric != "l2"
        if pos is None or 2 * len(pos) >= n:  # most of the index: one contiguous pass, then pick
            out = np.empty(n, np.float32)
            kernel = faiss.fvec_inner_products_ny if ip else faiss.fvec_L2sqr_ny
            # a plain loop in FAISS (no OpenMP team to keep to one thread); the vectors' pointer is
            # kept with their view until the next write
            kernel(faiss.swig_ptr(out), faiss.swig_ptr(q), self._vectors_ptr(xb), self.dims, n)
            if pos is not None:
                out = out[pos]
        else:
            out = np.empty(len(pos), np.float32)
            ids = np.ascontiguousarray(pos, np.int64)
            kernel = faiss.fvec_inner_products_by_idx if ip else faiss.fvec_L2sqr_by_idx
            with one_thread():
                kernel(faiss.swig_ptr(out), faiss.swig_ptr(q), faiss.swig_ptr(xb), faiss.swig_ptr(ids),
                       self.dims, 1, len(pos))
        if ip:
            np.subtract(1.0, out, out=out)
        return out

    def _vectors_ptr(self, xb: np.ndarray) -> Any:
        kept = self._derived.get("xb_ptr")
        if kept is None or kept[0] is not xb:
            kept = self._derived["xb_ptr"] = (xb, faiss.swig_ptr(xb))
        return kept[1]

    def _search_graph(self, q: np.ndarray, plan: Plan) -> list[tuple[int, float, int]]:
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

    def _selector_bitmap(self, plan: Plan) -> np.ndarray | None:
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
        return ranking.best_docs(self._doc.view[pos], self._chunk.view[pos], dist, k)

    def _finish_codes(self, q: np.ndarray, pos: np.ndarray, raw: np.ndarray,
                      plan: Plan) -> list[tuple[int, float, int]]:
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
        return ranking.best_docs(docs[at[ok]], found[ok], dist, k)
