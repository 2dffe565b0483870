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
    order, and each run's doc id (ascending). It depends only on ``docs``: an index keeps the grouping
    of its live chunks between writes (``VectorIndex._live_groups``), so a search does not sort again."""
    order = np.argsort(docs, kind="stable")
    docs_sorted = docs[order]
    starts = np.flatnonzero(first_of_runs(docs_sorted))
    return order, starts, docs_sorted[starts]


def doc_best(docs: np.ndarray, dist: np.ndarray, groups: Grouping | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(order, starts, best)``: chunks ordered by doc, where each doc's run starts, its best distance."""
    order, starts, _ = grouping(docs) if groups is None else groups
    best = np.minimum.reduceat(dist[order], starts) if len(order) else np.empty(0, dist.dtype)
    return order, starts, best


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
    if not len(docs):
        return np.ones(0, bool)
    groups = grouping(docs) if groups is None else groups
    _, _, best = doc_best(docs, approx, groups)
    # Within a document, only the chunks near its own closest can be its closest exactly: with every error
    # at most ``rel_tol * (1 + |d| + scale)``, a chunk farther than the document's best by twice the
    # largest such error is not. (When every document makes the cut, as on a small table or a hybrid
    # search's wide window, this is what keeps the float64 rescoring to a few chunks per document.)
    widest = 2.0 * rel_tol * (1.0 + float(np.abs(approx).max()) + scale)
    if len(best) <= k:
        return approx <= _own_best(docs, groups[2], best, np.arange(len(docs))) + widest
    kth = float(np.partition(best, k - 1)[k - 1])
    keep = approx <= kth + 2.0 * rel_tol * (1.0 + abs(kth) + scale)
    near = np.flatnonzero(keep)         # the few chunks near the cut: only they need their document's best
    keep[near] = approx[near] <= _own_best(docs, groups[2], best, near) + widest
    return keep


def _own_best(docs: np.ndarray, firsts: np.ndarray, best: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The best distance of the document of each chunk at ``at`` (``firsts``: the doc id of each of
    ``best``'s runs, ascending)."""
    return best[np.searchsorted(firsts, docs[at])]


def top_docs(docs: np.ndarray, chunks: np.ndarray, dist: np.ndarray, k: int) -> np.ndarray:
    """Indexes (into the arrays) of the best chunk of each of the k best documents, best first."""
    if not len(docs):
        return np.empty(0, np.int64)
    order = np.lexsort((chunks, dist, docs))
    firsts = order[first_of_runs(docs[order])]
    return firsts[np.lexsort((docs[firsts], dist[firsts]))][:k]


def distances64(x: np.ndarray, q: np.ndarray, metric: str) -> np.ndarray:
    """Exact distances in float64: l2 squared, or 1 - dot for ip and cosine."""
    x64, q64 = x.astype(np.float64), q.astype(np.float64).ravel()
    if metric == "l2":
        return ((x64 - q64) ** 2).sum(axis=1)
    return 1.0 - (x64 * q64).sum(axis=1)


def locate(keys: np.ndarray, found: np.ndarray) -> np.ndarray:
    """For each of ``found``, its index in ``keys`` (distinct ids), or -1 when it is not there."""
    order = np.argsort(keys, kind="stable")
    at = np.searchsorted(keys[order], found)
    at = np.minimum(at, max(len(keys) - 1, 0))
    hit = (keys[order][at] == found) if len(keys) else np.zeros(len(found), bool)
    return np.where(hit, order[at] if len(keys) else -1, -1)
