"""Maximal marginal relevance (Qdrant's semantics): pick results one at a time, each maximising

    (1 - diversity) * relevance(d)  -  diversity * max over the picked p of  similarity(d, p)

``diversity`` in [0, 1]: 0 is relevance alone (the input order), 1 is dissimilarity alone (after the
first pick). Similarities are cosines of the given vectors (normalised here); relevance is whatever
the caller ranks by (knn's similarity, after any length penalty). Ties go to the earlier candidate.

``for_query`` is the same selection in the LangChain/LlamaIndex spelling (Carbonell and Goldstein,
1998): relevance is the cosine to the query and ``lambda_mult = 1 - diversity`` (1: relevance alone).
The integrations use it (a pure function of NumPy arrays: the one MMR of the package).
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


def for_query(query, candidates, k: int, lambda_mult: float = 0.5) -> list[int]:
    """The positions in ``candidates`` (an (n, dims) array) of the ``k`` documents MMR picks for
    ``query``, in the order picked: each maximises ``lambda_mult * cos(query, d) - (1 - lambda_mult) *
    max cos(d, s)`` over the documents ``s`` already picked."""
    if not 0.0 <= float(lambda_mult) <= 1.0:
        raise ValueError(f"lambda_mult must be between 0 and 1, not {lambda_mult!r}")
    vectors = np.asarray(candidates, dtype=np.float64)
    if k <= 0 or vectors.size == 0:
        return []
    vectors = vectors.reshape(len(vectors), -1)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1.0, norms)
    q = np.asarray(query, dtype=np.float64).reshape(-1)
    q = q / (np.linalg.norm(q) or 1.0)
    relevance = unit @ q
    order = np.argsort(-relevance, kind="stable")      # the most relevant first: the first pick, at any λ
    picks, _ = select(unit[order], relevance[order], k, 1.0 - float(lambda_mult))
    return [int(order[i]) for i in picks]
