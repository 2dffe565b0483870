"""Maximal marginal relevance (Qdrant's semantics): pick results one at a time, each maximising

    (1 - diversity) * relevance(d)  -  diversity * max over the picked p of  similarity(d, p)

``diversity`` in [0, 1]: 0 is relevance alone (the input order), 1 is dissimilarity alone (after the
first pick). Similarities are cosines of the given vectors (normalised here); relevance is whatever
the caller ranks by (knn's similarity, after any length penalty). Ties go to the earlier candidate.
"""
from __future__ import annotations

import numpy as np


def select(vectors: np.ndarray, relevance: np.ndarray, n: int, diversity: float) -> tuple[list[int], list[float]]:
    """Indices of the ``n`` picks in pick order, and each pick's MMR score when it was picked."""
    count = len(relevance)
    if count == 0 or n <= 0:
        return [], []
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1.0, norms)
    similar = unit @ unit.T
    closest = np.full(count, -np.inf)           # max similarity to the picks so far
    free = np.ones(count, bool)
    picks, scores = [], []
    for _ in range(min(n, count)):
        penalty = np.where(np.isfinite(closest), closest, 0.0)
        marginal = (1.0 - diversity) * relevance - diversity * penalty
        marginal = np.where(free, marginal, -np.inf)
        best = int(np.argmax(marginal))
        picks.append(best)
        scores.append(float(marginal[best]))
        free[best] = False
        closest = np.maximum(closest, similar[best])
    return picks, scores
