"""``vectors.search.ranked``: the order of an index search's hits as ``narrowed`` gives it (float32
distances, ties by id), without narrowing when no two neighbours can round to the same float32
(knn_direct's ``SELECT id`` alone takes it). Its ids must equal ``narrowed``'s for any hits sorted as
the index sorts them: spread out, near-ties closer than float32 can tell apart, exact ties, negative
(inner product) and huge distances, NaN and infinities."""
from __future__ import annotations

import numpy as np
import pytest

from tesseradb.vectors.search import narrowed, ranked


def _hits(dists, docs=None):
    """Hits as the index returns them: by distance (float64), then doc id."""
    docs = list(range(1, len(dists) + 1)) if docs is None else docs
    rows = [(int(doc), float(d), int(doc) * 10) for doc, d in zip(docs, dists)]
    return sorted(rows, key=lambda h: (h[1], h[0]))


def _ids(hits):
    return [h[0] for h in hits]


@pytest.mark.parametrize("seed", range(40))
def test_its_ids_are_narroweds(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    scale = [1e-40, 1e-3, 1.0, 1e6, 3e38][seed % 5]
    base = rng.normal(size=n) * scale
    if seed % 3 == 0:           # neighbours closer than float32 can tell apart
        base[1:] = base[0] + np.arange(1, n) * abs(base[0]) * 2.0 ** -26
    if seed % 4 == 0 and n > 2:     # an exact tie, the ids in reverse
        base[2] = base[1]
    docs = rng.permutation(np.arange(100, 100 + n)).tolist()
    hits = _hits(base, docs)
    for k in (1, 5, n):
        assert _ids(ranked(hits, k)) == _ids(narrowed(hits, k)), (seed, k)


def test_near_ties_take_narroweds_order():
    """Two documents 1e-9 apart in float64 round to the same float32: the lower id first, as the
    general path's ORDER BY dist, id puts it; farther apart, the index's order stands."""
    hits = [(9, 0.5, 90), (3, 0.5 + 1e-9, 30), (4, 0.75, 40)]
    assert _ids(narrowed(hits, 3)) == [3, 9, 4] == _ids(ranked(hits, 3))
    apart = [(9, 0.5, 90), (3, 0.5001, 30), (4, 0.75, 40)]
    assert _ids(ranked(apart, 3)) == [9, 3, 4] == _ids(narrowed(apart, 3))
    assert ranked(apart, 2) == apart[:2]          # no float32 rounding was needed: the hits as they came


@pytest.mark.parametrize("dists", [[0.1, float("nan"), 0.3], [0.1, float("inf")], [-float("inf"), 0.2],
                                   [1e39, 2e39], [3.4e38, 3.5e38], [], [0.25]])
def test_odd_distances(dists):
    hits = _hits(dists)
    assert _ids(ranked(hits, 5)) == _ids(narrowed(hits, 5))
