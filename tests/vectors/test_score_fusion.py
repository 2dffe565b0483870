"""Score fusion (vectors/score_fusion.py): the fused list equals the straightforward fusion, a Fused
row per document updated hit by hit (how it was written before the scores were summed first), for
both methods and normalizations; with ``top`` it is the first rows of the whole list down to the
``top``-th score, ties kept."""
from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from tesseradb.vectors import score_fusion
from tesseradb.vectors.fusion import Fused, RankedList, note_hit


def _reference(lists: list[RankedList], method: str, rank_constant: int, normalization: str) -> list[Fused]:
    fused: dict[int, Fused] = {}
    for ranked in lists:
        if not ranked.hits:
            continue
        if method == "linear":
            if ranked.kind == "text":
                sims = [float(s) for _, s, _ in ranked.hits]
            else:
                sims = [1.0 / (1.0 + max(float(d), 0.0)) for _, d, _ in ranked.hits]
            if normalization == "minmax":
                low, high = min(sims), max(sims)
                values = [1.0] * len(sims) if high == low else [(s - low) / (high - low) for s in sims]
            else:
                norm = math.sqrt(sum(s * s for s in sims))
                values = [0.0] * len(sims) if norm == 0 else [s / norm for s in sims]
            terms = [ranked.weight * v for v in values]
        else:
            terms = [ranked.weight / (rank_constant + rank) for rank in range(1, len(ranked.hits) + 1)]
        for (doc, score, chunk), term in zip(ranked.hits, terms):
            hit = fused.get(doc)
            if hit is None:
                hit = fused[doc] = Fused(doc, 0.0)
            hit.score += term
            note_hit(hit, ranked.kind, score, chunk)
    return sorted(fused.values(), key=lambda h: (-h.score, h.doc_id))


def _side(kind: str):
    # few distinct documents and scores: documents found by several sides, ties of scores and of fused scores
    score = st.sampled_from([0.0, 0.25, 0.5, 1.0, 1.5, 3.0]) if kind == "knn" else \
        st.floats(min_value=0.0, max_value=20.0, allow_nan=False, width=32)
    hit = st.tuples(st.integers(1, 30), score, st.one_of(st.none(), st.integers(1, 200)))
    return st.builds(lambda hits, weight, name: RankedList(name, kind, _distinct(hits), weight),
                     st.lists(hit, max_size=25), st.sampled_from([1.0, 0.3, 0.7, 2.0]), st.none())


def _distinct(hits):
    seen: set[int] = set()
    return [h for h in hits if not (h[0] in seen or seen.add(h[0]))]        # a side lists a document once


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_side("text"), _side("knn")), min_size=1, max_size=3),
       st.sampled_from(["linear", "rrf"]), st.sampled_from([1, 60]), st.sampled_from(["minmax", "l2"]),
       st.one_of(st.none(), st.integers(1, 40)))
def test_fusion_equals_the_hit_by_hit_fusion(lists, method, rank_constant, normalization, top):
    whole = _reference(lists, method, rank_constant, normalization)
    got = score_fusion.fuse(lists, method, rank_constant, normalization, top=top)
    if top is None or len(whole) <= top:
        assert got == whole
    else:
        cut = sorted((h.score for h in whole), reverse=True)[top - 1]
        assert got == [h for h in whole if h.score >= cut]
        assert len(got) >= top


def test_top_keeps_the_rows_tied_with_the_last_shown_one():
    text = RankedList(None, "text", [(1, 5.0, 11), (2, 5.0, 12), (3, 5.0, 13), (4, 1.0, 14)])
    got = score_fusion.fuse([text], "rrf", 60, "minmax", top=1)
    assert [h.doc_id for h in got] == [1]              # RRF: ranks differ, so scores do
    got = score_fusion.fuse([text], "linear", 60, "minmax", top=2)
    assert [(h.doc_id, h.score, h.weight, h.chunk_id) for h in got] == [(1, 1.0, 5.0, 11), (2, 1.0, 5.0, 12),
                                                                        (3, 1.0, 5.0, 13)]
