"""Score fusion: RRF (``vectors/fusion.py`` gives the formula) and ``OPTION fusion_method='linear'``
(Elasticsearch's ``linear`` retriever), both by :func:`fuse`.

Each side's scores are first made "higher is better" (a text side's BM25 as it is; a knn side's
distance d as the similarity 1 / (1 + d), so every metric gives a positive number that falls as the
distance grows), then normalised over the side's candidates:

* ``minmax`` (default): (s - min) / (max - min), so the side's best is 1 and its worst 0 (all equal: 1);
* ``l2``: s / sqrt(sum of s²) over the side's candidates.

    hybrid_score(d) = sum over the sides that found d of  weight_side * normalised score_side(d)

A side that did not find d adds nothing. Ties are broken by document id.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from tesseradb import errors
from tesseradb.errors import UserError
from tesseradb.vectors.fusion import Fused, RankedList, note_hit

NORMALIZATIONS = ("minmax", "l2")
METHODS = ("rrf", "linear")


def _similarity(ranked: RankedList) -> list[float]:
    if ranked.kind == "text":
        return [float(s) for _, s, _ in ranked.hits]
    return [1.0 / (1.0 + max(float(d), 0.0)) for _, d, _ in ranked.hits]


def _minmax(scores: list[float]) -> list[float]:
    low, high = min(scores), max(scores)
    return [1.0] * len(scores) if high == low else [(s - low) / (high - low) for s in scores]


def _l2(scores: list[float]) -> list[float]:
    norm = math.sqrt(sum(s * s for s in scores))
    return [0.0] * len(scores) if norm == 0 else [s / norm for s in scores]


_NORMALIZE: dict[str, Callable[[list[float]], list[float]]] = {"minmax": _minmax, "l2": _l2}


def _terms(ranked: RankedList, method: str, rank_constant: int, normalization: str) -> list[float]:
    """What each of the side's hits adds to its document's score, in the side's order."""
    weight = ranked.weight
    if method == "linear":
        return [weight * value for value in _NORMALIZE[normalization](_similarity(ranked))]
    return [weight / (rank_constant + rank) for rank in range(1, len(ranked.hits) + 1)]


def fuse(lists: Sequence[RankedList], method: str, rank_constant: int, normalization: str,
         top: int | None = None) -> list[Fused]:
    """The fused list by ``method`` ('rrf' or 'linear'), by score descending, then document id.

    With ``top``, only the rows scoring at least the ``top``-th best one (ties kept): what a query
    that shows the fused list's first ``top`` rows as they are can show (hybrid.SideSpec.shown_first).
    The scores are summed per document first (each side's terms in the sides' order, the
    order Manticore's RRF adds them in), and a ``Fused`` row is made only for the rows returned."""
    scores: dict[int, float] = {}
    get = scores.get
    for ranked in lists:
        if ranked.hits:
            for (doc, _, _), term in zip(ranked.hits, _terms(ranked, method, rank_constant, normalization)):
                scores[doc] = get(doc, 0.0) + term
    if top is not None and 0 < top < len(scores):
        cut = sorted(scores.values(), reverse=True)[top - 1]
        docs = [doc for doc, score in scores.items() if score >= cut]
    else:
        docs = list(scores)
    docs.sort(key=lambda doc: (-scores[doc], doc))
    fused = {doc: Fused(doc, scores[doc]) for doc in docs}
    for ranked in lists:
        kind = ranked.kind
        for doc, score, chunk in ranked.hits:
            hit = fused.get(doc)
            if hit is not None:
                note_hit(hit, kind, score, chunk)
    return list(fused.values())


def check_options(method: str | None, given: set[str]) -> None:
    """``normalization`` belongs to the linear method, ``rank_constant`` to RRF."""
    if "normalization" in given and method != "linear":
        raise UserError("option normalization needs OPTION fusion_method='linear'", errors.SqlSyntaxError)
    if "rank_constant" in given and method == "linear":
        raise UserError("option rank_constant belongs to fusion_method='rrf', not 'linear'", errors.SqlSyntaxError)


def describe(method: str | None, rank_constant: int, normalization: str) -> str:
    """EXPLAIN's fusion row."""
    if method == "linear":
        return f"fusion: linear, normalization={normalization}"
    return f"fusion: rrf, rank_constant={rank_constant}"
