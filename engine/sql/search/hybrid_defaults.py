"""The defaults of ``hybrid_match()`` that are not Manticore's but measured best on the manual's
natural-language questions and headings (docs/benchmarks.md, "Full-text and hybrid search"):

* the text side reads the column's chunk-level index, which stems English words whatever the
  table's ``morphology`` (``catalog.fulltext.chunk_tokenizer``), with English stop words left out of
  the query; each entry has the chunk's heading path (or context line) as a field weighted 2 beside
  its text (``storage.fulltext.ChunkTextIndex``, BM25F's title boost): on the whole manual it lifted
  the deep questions' recall@1 by about 6 points and the heading queries' by about 7 (weight chosen
  among 1, 2, 3 on half the questions, docs/benchmarks.md);
* each side retrieves at least ``WINDOW`` candidates (Manticore's window is the LIMIT): fusion can
  only lift a document that one side found, and a deep answer is often 11th-50th on one side;
* the two sides are fused **linearly** (min-max normalised scores summed, ``fusion_method='linear'``)
  unless the query names a method, or gives ``rank_constant`` (then RRF): on the natural-language
  questions linear fusion measured 5 points of recall@1 above RRF (k=60), and above it on the
  heading queries too (docs/benchmarks.md);
* documents are fused (each by its best chunk, MaxP), not chunks.

``OPTION window_size=N`` still sets the window exactly; explicit ``MATCH() AND knn()`` fusion keeps
Manticore's window (the LIMIT) and needs its ``fusion_method``.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

WINDOW = 50
METHOD = "linear"


def method(opts: Any, hybrids: Sequence[object]) -> str | None:
    """The fusion method: the query's, else hybrid_match()'s default (RRF when ``rank_constant`` is given)."""
    if opts.fusion_method or not hybrids:
        return opts.fusion_method
    return "rrf" if "rank_constant" in opts.given else METHOD


def window(hybrids: Sequence[object], opts: Any = None) -> list[int]:
    """The smallest window a query with these ``hybrid_match()`` calls and options gets (none: no
    floor): a reranked query retrieves at least the reranker's window."""
    floor = [WINDOW] if hybrids else []
    if opts is not None and getattr(opts, "rerank", None):
        floor.append(opts.rerank_window)
    return floor


def best_chunks(store, fts: str, chunks: str, param: str, bound: dict, window: int) -> list[tuple[int, float, int]]:
    """hybrid_match's text side without a filter: the ``window`` best documents by their best chunk's
    BM25 (MaxP), as (doc, BM25, chunk), in one pass: FTS5 scores every matching chunk once (its
    ``rank``, the index's configured BM25) and SQLite keeps each document's best. (Taking the top
    chunks with ``ORDER BY rank LIMIT m`` and doubling ``m`` until ``window`` documents showed up
    scored every match again on each round: 4 rounds, ~10 ms, on a question whose words fill one long
    page's chunks, against ~1 ms for this; the same documents, scores and chunks on the manual's
    heading queries.) A document's chunk is one holding its best score (``MIN(rank)`` takes its
    other columns from such a row, as the filtered form's ``MAX``.) The FTS5 scan is the join's outer
    loop (CROSS JOIN keeps it there), not a MATERIALIZED subquery first (``rank`` is a column, which an aggregate may read, where
    ``bm25()`` must run in the scan): SQLite then keeps no copy of the ~800 matching chunks of a
    heading query, 0.09 ms of ~0.85 on the manual, the same rows."""
    return [(int(doc), float(score), int(chunk)) for doc, score, chunk in store.execute(
        f"SELECT k.doc_id, -MIN(x.rank) AS best, x.rowid FROM {fts}(:{param}) x CROSS JOIN {chunks} k "
        f"ON k.chunk_id = x.rowid GROUP BY k.doc_id ORDER BY best DESC, k.doc_id LIMIT {int(window)}", bound)]
