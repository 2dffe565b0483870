"""storage/ranking.py's near_cut: which chunks a search rescores exactly, checked against its
definition computed chunk by chunk (random tables, ties and one-document tables included)."""
from __future__ import annotations

import numpy as np
import pytest

from tesseradb.storage.ranking import grouping, near_cut


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
