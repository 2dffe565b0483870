"""vectors/search.py's _collapse: the k best documents with their distances reported as float32
values, ranked by that distance then doc id, checked against its definition one hit at a time."""
from __future__ import annotations

import random

import numpy as np
import pytest

from tesseradb.vectors.search import _collapse

F32_MAX = float(np.finfo(np.float32).max)


def _by_definition(best: dict[int, tuple[float, int]], k: int) -> list[tuple[int, float, int]]:
    def narrow(d: float) -> float:
        return float(np.float32(d)) if abs(d) <= F32_MAX else float(d)
    return sorted(((doc, narrow(d), c) for doc, (d, c) in best.items()), key=lambda h: (h[1], h[0]))[:k]


@pytest.mark.parametrize("seed", range(25))
def test_collapse_rounds_and_ranks_as_its_definition(seed):
    rng = random.Random(seed)
    for _ in range(200):
        best = {}
        for _ in range(rng.randint(0, 15)):
            d = rng.choice([rng.random(), round(rng.random(), 3), 0.5, -0.0, 0.0, 1 - 1e-9,
                            float(np.float32(0.3)) + 1e-12,       # ties once rounded to float32
                            1e39 if seed % 5 == 0 else 2.0])      # beyond float32: kept as is
            best[rng.randint(0, 30)] = (d, rng.randint(0, 1000))
        k = rng.randint(1, 12)
        got = _collapse(best, k)
        assert got == _by_definition(best, k)
        assert all(type(d) is float for _, d, _ in got)
