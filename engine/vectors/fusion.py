"""Reciprocal rank fusion (RRF) of ranked candidate lists, as Manticore's hybrid search does it:

    score(d) = sum over the lists r that contain d of  weight_r / (rank_constant + rank_r(d))

with ``rank_r(d)`` the 1-based position of d in list r. A document missing from a list gets nothing
from it. Ties are broken by document id, so the order is deterministic.
"""
from __future__ import annotations

from collections.abc import Sequence
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


def rrf(lists: Sequence[RankedList], rank_constant: int = DEFAULT_RANK_CONSTANT) -> list[Fused]:
    fused: dict[int, Fused] = {}
    for ranked in lists:
        for rank, (doc, score, chunk) in enumerate(ranked.hits, start=1):
            hit = fused.get(doc)
            if hit is None:     # (setdefault would build a Fused for every hit, found before or not)
                hit = fused[doc] = Fused(doc, 0.0)
            hit.score += ranked.weight / (rank_constant + rank)
            note_hit(hit, ranked.kind, score, chunk)
    return sorted(fused.values(), key=lambda h: (-h.score, h.doc_id))


def note_hit(hit: Fused, kind: str, score: float, chunk: int | None) -> None:
    """Keep a side's own score on the fused row: the text side's BM25, the smallest knn distance."""
    if kind == "text":
        hit.weight = score if hit.weight is None else max(hit.weight, score)
        if hit.chunk_id is None:
            hit.chunk_id = chunk
    elif hit.dist is None or score < hit.dist:
        hit.dist = score
        hit.chunk_id = chunk if chunk is not None else hit.chunk_id
