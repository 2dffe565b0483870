"""From chunk distances to document rankings (MaxP: a document scores as its closest chunk).

Pure numpy over parallel arrays: ``docs`` (doc id of each chunk), ``chunks`` (chunk id) and ``dist``.
Ties go to the smaller doc id, and within a document to the smaller chunk id.
"""
from __future__ import annotations

import numpy as np


def first_of_runs(sorted_keys: np.ndarray) -> np.ndarray:
    """Mask of the first element of each run of equal keys (``np.r_[True, a[1:] != a[:-1]]`` without
    np.r_'s Python-level parsing, which cost more than the comparison on a query's few candidates)."""
    mask = np.empty(len(sorted_keys), bool)
    if len(mask):
        mask[0] = True
        np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=mask[1:])
    return mask


Grouping = tuple  # (order, starts, firsts): see ``grouping``


def grouping(docs: np.ndarray) -> Grouping:
    """``(order, starts, firsts)``: chunk indexes ordered by doc, where each doc's run starts in that
    order, and each run's doc id (ascending). ``order`` is None when ``docs`` is in order already (a
    table written in id order: its chunks need no gather). It depends only on ``docs``: an index keeps
    the grouping of its live chunks between writes (``VectorIndex._live_groups``), so a search does
    not sort again."""
    in_order = len(docs) < 2 or bool((docs[1:] >= docs[:-1]).all())
    order = None if in_order else np.argsort(docs, kind="stable")
    docs_sorted = docs if order is None else docs[order]
    starts = np.flatnonzero(first_of_runs(docs_sorted))
    return order, starts, docs_sorted[starts]


def doc_best(docs: np.ndarray, dist: np.ndarray, groups: Grouping | None = None) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """``(order, starts, best)``: chunks ordered by doc (None: in order already), where each doc's
    run starts, its best distance."""
    order, starts, _ = grouping(docs) if groups is None else groups
    if not len(starts):
        return order, starts, np.empty(0, dist.dtype)
    return order, starts, np.minimum.reduceat(dist if order is None else dist[order], starts)


def near_cut(docs: np.ndarray, approx: np.ndarray, k: int, rel_tol: float, scale: float,
             groups: Grouping | None = None) -> np.ndarray:
    """Mask of the chunks whose own approximate distance can still put a document into the top k.

    The error of an approximate distance is taken to be at most ``tol = rel_tol * (1 + |kth| +
    scale)``. With every approximate distance within ``tol`` of the exact one, the k-th best document's exact
    distance is at most ``kth + tol`` (kth: the k-th best approximate document distance), so a chunk
    beyond ``kth + 2 tol`` is farther than the cut exactly too: it can neither enter the top k nor
    be the closest chunk of a document that does. Nor can a chunk far from its own document's closest
    (below). Every other chunk is kept for exact rescoring. ``groups``: ``grouping(docs)``, when the
    caller has it already.
    """
    keep = np.zeros(len(docs), bool)
    keep[near_positions(docs, approx, k, rel_tol, scale, groups)] = True
    return keep


def near_positions(docs: np.ndarray, approx: np.ndarray, k: int, rel_tol: float, scale: float,
                   groups: Grouping | None = None, extent: float | None = None) -> np.ndarray:
    """The indexes of ``near_cut``'s chunks, ascending (what a search rescores: one mask fewer).
    ``extent``: at least the largest |distance| of every chunk when ``approx`` holds only some of them
    (int8_scan's candidates), so that the result keeps every chunk the whole array's would keep."""
    if not len(docs):
        return np.empty(0, np.int64)
    groups = grouping(docs) if groups is None else groups
    _, _, best = doc_best(docs, approx, groups)
    # Within a document, only the chunks near its own closest can be its closest exactly: with every error
    # at most ``rel_tol * (1 + |d| + scale)``, a chunk farther than the document's best by twice the
    # largest such error is not. (When every document makes the cut, as on a small table or a hybrid
    # search's wide window, this is what keeps the float64 rescoring to a few chunks per document.)
    # the largest |distance|, without an array of them (NaN propagates through max and min alike); ufuncs
    # and array methods directly, not numpy's Python wrappers (np.flatnonzero, np.partition): per query
    # they are called once each on a few thousand values, and their wrappers cost as much
    if extent is None:
        extent = max(float(np.maximum.reduce(approx)), -float(np.minimum.reduce(approx)))
    widest = 2.0 * rel_tol * (1.0 + extent + scale)
    if len(best) <= k:
        return (approx <= _own_best(docs, groups[2], best, np.arange(len(docs))) + widest).nonzero()[0]
    part = best.copy()
    part.partition(k - 1)
    kth = float(part[k - 1])
    near = (approx <= kth + 2.0 * rel_tol * (1.0 + abs(kth) + scale)).nonzero()[0]
    # the few chunks near the cut: only they need their document's best
    return near[approx[near] <= _own_best(docs, groups[2], best, near) + widest]


def _own_best(docs: np.ndarray, firsts: np.ndarray, best: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The best distance of the document of each chunk at ``at`` (``firsts``: the doc id of each of
    ``best``'s runs, ascending)."""
    return best[firsts.searchsorted(docs[at])]


def top_docs(docs: np.ndarray, chunks: np.ndarray, dist: np.ndarray, k: int) -> np.ndarray:
    """Indexes (into the arrays) of the best chunk of each of the k best documents, best first."""
    if not len(docs):
        return np.empty(0, np.int64)
    order = np.lexsort((chunks, dist, docs))
    firsts = order[first_of_runs(docs[order])]
    return firsts[np.lexsort((docs[firsts], dist[firsts]))][:k]


SMALL = 64      # at most this many chunks: ``best_docs`` ranks them in Python (fewer numpy calls)


def best_docs(docs: np.ndarray, chunks: np.ndarray, dist: np.ndarray, k: int) -> list[tuple[int, float, int]]:
    """``(doc, dist, chunk)`` of the best chunk of each of the k best documents, best first: what
    ``top_docs`` picks, as Python values (a search's result)."""
    if len(docs) > SMALL:
        return [(int(docs[i]), float(dist[i]), int(chunks[i])) for i in top_docs(docs, chunks, dist, k)]
    # the chunks by distance, then doc id, then chunk id: a document's first is its best, and the
    # documents come in their order (one sort and a walk that stops at the k-th: right after a model
    # run, a few us less than a best-per-document dict sorted afterwards)
    ranked: list[tuple[int, float, int]] = []
    seen: set[int] = set()
    for x, d, c in sorted(zip(dist.tolist(), docs.tolist(), chunks.tolist())):
        if d not in seen:
            seen.add(d)
            ranked.append((d, x, c))
            if len(ranked) == k:
                break
    return ranked[:k]


def distances64(x: np.ndarray, q: np.ndarray, metric: str) -> np.ndarray:
    """Exact distances in float64: l2 squared, or 1 - dot for ip and cosine. (The rows are cast to
    float64 first and the query applied in place: a mixed float32-by-float64 ufunc, the same values
    bit for bit, cost more right after a model run: 0.006-0.017 ms on a search's ~27 rows.)"""
    q64 = q.astype(np.float64).ravel()
    y = x.astype(np.float64)
    if metric == "l2":
        np.subtract(y, q64, out=y)
        np.multiply(y, y, out=y)
        return np.add.reduce(y, axis=1)      # ndarray.sum(axis=1), without its wrapper
    # float32 times float64: each product exact, as of x.astype(float64)
    np.multiply(y, q64, out=y)
    return 1.0 - np.add.reduce(y, axis=1)


def locate(keys: np.ndarray, found: np.ndarray) -> np.ndarray:
    """For each of ``found``, its index in ``keys`` (distinct ids), or -1 when it is not there."""
    order = np.argsort(keys, kind="stable")
    at = np.searchsorted(keys[order], found)
    at = np.minimum(at, max(len(keys) - 1, 0))
    hit = (keys[order][at] == found) if len(keys) else np.zeros(len(found), bool)
    return np.where(hit, order[at] if len(keys) else -1, -1)
