"""Maximal marginal relevance (Carbonell and Goldstein, 1998), exactly, over a few candidates' vectors.

Each step takes the candidate that maximizes ``lambda * sim(query, d) - (1 - lambda) * max sim(d, s)``
over the documents ``s`` already taken, with cosine similarity; ``lambda_mult=1`` is plain relevance,
``0`` the most diverse. The candidates come from a filtered knn() search, so a filter applies before
the k are chosen, never after.
"""
from __future__ import annotations

import numpy as np


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def select(query, candidates, k: int, lambda_mult: float = 0.5) -> list[int]:
    """The positions in ``candidates`` (an (n, dims) array) of the ``k`` documents MMR picks, in
    the order picked."""
    if not 0.0 <= float(lambda_mult) <= 1.0:
        raise ValueError(f"lambda_mult must be between 0 and 1, not {lambda_mult!r}")
    vectors = np.asarray(candidates, dtype=np.float64)
    if k <= 0 or vectors.size == 0:
        return []
    vectors = _unit(vectors.reshape(len(vectors), -1))
    relevance = vectors @ _unit(np.asarray(query, dtype=np.float64).reshape(-1))
    similarity = vectors @ vectors.T
    chosen = [int(np.argmax(relevance))]
    closest = similarity[:, chosen[0]].copy()          # each candidate's highest similarity to the chosen
    while len(chosen) < min(k, len(vectors)):
        score = lambda_mult * relevance - (1.0 - lambda_mult) * closest
        score[chosen] = -np.inf
        best = int(np.argmax(score))
        chosen.append(best)
        closest = np.maximum(closest, similarity[:, best])
    return chosen
