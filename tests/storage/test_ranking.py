"""storage/ranking.py's near_cut: which chunks a search rescores exactly, checked against its
definition computed chunk by chunk (random tables, ties and one-document tables included); and the
float64 distances they are ranked by."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tesseradb.storage.ranking import SMALL, best_docs, distances64, grouping, near_cut, near_positions, top_docs


def _by_definition(docs: np.ndarray, approx: np.ndarray, k: int, rel_tol: float, scale: float) -> np.ndarray:
    """A chunk is kept when it is near its own document's best, and (when more than k documents)
    near the k-th best document's distance."""
    best: dict[int, np.float32] = {}
    for d, a in zip(docs.tolist(), approx):
        best[d] = min(best.get(d, a), a)
    widest = 2.0 * rel_tol * (1.0 + float(np.abs(approx).max()) + scale)
    keep = np.array([a <= best[d] + np.float32(widest) for d, a in zip(docs.tolist(), approx)], bool)
    if len(best) > k:
        kth = float(sorted(best.values())[k - 1])
        keep &= approx <= kth + 2.0 * rel_tol * (1.0 + abs(kth) + scale)
    return keep


@pytest.mark.parametrize("seed", range(40))
def test_near_cut_keeps_exactly_the_chunks_its_definition_keeps(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    docs = rng.integers(0, int(rng.integers(1, 60)), n).astype(np.int64)
    approx = rng.normal(0.5, 0.2, n).astype(np.float32)
    if seed % 3 == 0:                                   # ties, and distances within the tolerance
        approx = np.round(approx, 2).astype(np.float32)
    k = int(rng.integers(1, 25))
    rel_tol, scale = (1e-4, 1.0) if seed % 2 else (5e-2, 0.0)
    got = near_cut(docs, approx, k, rel_tol, scale)
    assert got.dtype == bool and np.array_equal(got, _by_definition(docs, approx, k, rel_tol, scale))
    # with the grouping an index keeps between writes (VectorIndex._live_groups): the same chunks
    assert np.array_equal(near_cut(docs, approx, k, rel_tol, scale, grouping(docs)), got)


def test_near_cut_of_nothing_is_empty():
    assert near_cut(np.zeros(0, np.int64), np.zeros(0, np.float32), 3, 1e-4, 0.0).shape == (0,)


@pytest.mark.parametrize("seed", range(20))
def test_near_cut_of_a_table_in_doc_order_needs_no_gather_and_keeps_the_same_chunks(seed):
    """Chunks written in doc id order (the usual table): the grouping keeps no order array, and the
    chunks kept are still exactly the definition's."""
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(1, 400))
    docs = np.sort(rng.integers(0, int(rng.integers(1, 60)), n)).astype(np.int64)
    approx = np.round(rng.normal(0.5, 0.2, n), 2 if seed % 2 else 6).astype(np.float32)
    k = int(rng.integers(1, 25))
    groups = grouping(docs)
    assert groups[0] is None
    want = _by_definition(docs, approx, k, 1e-4, 1.0)
    assert np.array_equal(near_cut(docs, approx, k, 1e-4, 1.0, groups), want)
    assert np.array_equal(near_positions(docs, approx, k, 1e-4, 1.0, groups), np.flatnonzero(want))


@pytest.mark.parametrize("seed", range(30))
def test_best_docs_ranks_as_top_docs(seed):
    """A search's result: each document's closest chunk (ties to the smaller chunk id), documents by
    distance then id, the k first; the same in Python (few chunks) as through numpy (many)."""
    rng = np.random.default_rng(200 + seed)
    n = int(rng.integers(1, 3 * SMALL if seed % 4 == 0 else SMALL + 1))     # mostly the Python path
    docs = rng.integers(0, int(rng.integers(1, 40)), n).astype(np.int64)
    chunks = rng.permutation(10 * n)[:n].astype(np.int64)
    dist = np.round(rng.normal(0.5, 0.2, n), 1 if seed % 3 == 0 else 12)     # ties when rounded hard
    k = int(rng.integers(1, 20))
    want = [(int(docs[i]), float(dist[i]), int(chunks[i])) for i in top_docs(docs, chunks, dist, k)]
    got = best_docs(docs, chunks, dist, k)
    assert got == want
    assert all(type(d) is int and type(x) is float and type(c) is int for d, x, c in got)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 40), st.integers(1, 50), st.sampled_from([1e-20, 1e-3, 1.0, 1e15]),
       st.sampled_from(["l2", "ip", "cosine"]), st.integers(0, 2**32 - 1))
def test_distances64_are_the_float64_products_summed_row_by_row(n, dims, scale, metric, seed):
    """Each distance from the rows' float32 values as float64 (every product exact), summed along the
    row by numpy's own reduction: the same values, bit for bit, as the mixed float32-by-float64 form."""
    rng = np.random.default_rng(seed)
    x = (rng.normal(size=(n, dims)) * scale).astype(np.float32)
    q = (rng.normal(size=dims) * scale).astype(np.float32)
    q64 = q.astype(np.float64)
    if metric == "l2":
        expected = np.add.reduce((x - q64) ** 2, axis=1)
    else:
        expected = 1.0 - np.add.reduce(np.multiply(x, q64), axis=1)
    got = distances64(x, q, metric)
    assert got.dtype == np.float64 and got.shape == (n,)
    assert np.array_equal(got, expected, equal_nan=True)
