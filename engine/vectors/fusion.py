"""The rows of hybrid search's fusion: a side's ranked list, a fused row, and what a side's hit keeps on it.
Reciprocal rank fusion (RRF), as Manticore's hybrid search does it (``score_fusion.fuse``):

    score(d) = sum over the lists r that contain d of  weight_r / (rank_constant + rank_r(d))

with ``rank_r(d)`` the 1-based position of d in list r. A document missing from a list gets nothing
from it. Ties are broken by document id, so the order is deterministic.
"""
from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_RANK_CONSTANT = 60


@dataclass
class RankedList:
    """One side of a hybrid search: (doc id, score, best chunk id) best first."""
    name: str | None
    kind: str                                   # 'text' or 'knn'
    hits: list[tuple[int, float, int | None]] = field(default_factory=list)
    weight: float = 1.0


@dataclass
class Fused:
    doc_id: int
    score: float
    weight: float | None = None                 # BM25 of the text side (None: not found by it)
    dist: float | None = None                   # smallest distance over the knn sides
    chunk_id: int | None = None                 # best chunk: the nearest knn chunk, else the text side's


def note_hit(hit: Fused, kind: str, score: float, chunk: int | None) -> None:
    """Keep a side's own score on the fused row: the text side's BM25, the smallest knn distance."""
    if kind == "text":
        hit.weight = score if hit.weight is None else max(hit.weight, score)
        if hit.chunk_id is None:
            hit.chunk_id = chunk
    elif hit.dist is None or score < hit.dist:
        hit.dist = score
        hit.chunk_id = chunk if chunk is not None else hit.chunk_id
