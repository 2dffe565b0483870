"""``OPTION rerank='<model directory>' [, rerank_window=N]``: the second stage of a knn(), MATCH() or
hybrid query. The first ``N`` candidates (default 50) of the fused list, before LIMIT, are scored by a
cross-encoder (``tesseradb.vectors.rerank``) on the pair (the query's text, the document's best
chunk) and put first, by that score (``rerank_score()``); candidates past the window keep their
order after them, with ``rerank_score()`` NULL.

* The query text: hybrid_match()'s text, else the first knn() with a text query, else the first
  MATCH()'s query as written. A query with none of them (knn by vector or by document id alone) is
  an error.
* The passage: the document's best chunk, as the side that found it says (the nearest chunk of the
  knn side, the best BM25 chunk of hybrid_match's text side); a document found only by a row-level
  MATCH() side, or whose chunk has no text span, is read whole (its text columns), cut to the
  model's window by its tokenizer.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlglot import exp

from tesseradb import errors
from tesseradb.catalog import fulltext as catalog_fulltext
from tesseradb.catalog.tables import Table
from tesseradb.catalog.values import literal
from tesseradb.errors import UserError
from tesseradb.sql.database import Database
from tesseradb.storage.catalog import quote
from tesseradb.vectors import rerank
from tesseradb.vectors.fusion import Fused
from tesseradb.vectors.knn_options import split_arguments

DEFAULT_WINDOW = 50


def check_options(opts: Any, select: exp.Expression, has_search: bool, match_filters_knn: bool) -> None:
    if "rerank_window" in opts.given and not opts.rerank:
        raise UserError("option rerank_window needs OPTION rerank='<model directory>'", errors.SqlSyntaxError)
    if not opts.rerank and any(_is_call(n, "rerank_score") for n in select.find_all(exp.Anonymous)):
        raise UserError("rerank_score() is only allowed with OPTION rerank='<model directory>'", errors.SqlSyntaxError)
    if opts.rerank and not has_search:
        raise UserError("OPTION rerank needs a knn(), MATCH() or hybrid_match() search to rerank", errors.SqlSyntaxError)
    if opts.rerank and match_filters_knn and not opts.fusion_method:
        raise UserError("OPTION rerank on MATCH() next to knn() needs OPTION fusion_method='rrf' or 'linear' "
                        "(without it MATCH() filters the knn search)", errors.SqlSyntaxError)


def _is_call(node: exp.Anonymous, name: str) -> bool:
    return isinstance(node.this, str) and node.this.lower() == name


def query_text(texts: Sequence[exp.Expression], knns: Sequence[exp.Anonymous], hybrids: Sequence[exp.Anonymous],
               bound: dict[str, Any]) -> str:
    """The text the cross-encoder pairs with each passage."""
    candidates = [h.expressions[0] for h in hybrids if h.expressions]
    candidates += [split_arguments(k).query for k in knns]
    candidates += [t.this if isinstance(t, exp.MatchAgainst) else t.expressions[0] for t in texts if
                   isinstance(t, exp.MatchAgainst) or t.expressions]
    for node in candidates:
        ok, value = literal(node, bound)
        if ok and isinstance(value, str) and value.strip():
            return value
    raise UserError("OPTION rerank needs query text: hybrid_match('...'), knn(col, k, '...') or MATCH('...') "
                    "(a query vector or a document id gives the cross-encoder nothing to read)", errors.SqlSyntaxError)


def _chunk_texts(db: Database, table: Table, column: str, chunk_ids: list[int]) -> dict[int, str]:
    index = catalog_fulltext.chunk_index(table, column)
    if index is None or not chunk_ids:
        return {}
    marks = ",".join("?" * len(chunk_ids))
    span = f"substr({index.source_sql('r.')}, k.start + 1, k.\"end\" - k.start)"
    rows = db.store.execute(f"SELECT k.chunk_id, {span} FROM {quote(index.chunks)} k JOIN {quote(table.name)} r "
                            f"ON r.id = k.doc_id WHERE k.chunk_id IN ({marks}) AND k.start IS NOT NULL", chunk_ids)
    return {int(c): t for c, t in rows if t}


def _document_texts(db: Database, table: Table, column: str | None, doc_ids: list[int]) -> dict[int, str]:
    columns = catalog_fulltext.text_columns(table)
    index = catalog_fulltext.chunk_index(table, column) if column else None
    if columns:
        source = " || ' ' || ".join(f"COALESCE(CAST({quote(c)} AS TEXT), '')" for c in columns)
    elif index is not None:
        source = index.source_sql()
    else:
        return {}
    marks = ",".join("?" * len(doc_ids))
    rows = db.store.execute(f"SELECT id, {source} FROM {quote(table.name)} WHERE id IN ({marks})", doc_ids)
    return {int(d): t for d, t in rows}


def passages(db: Database, table: Table, column: str | None, hits: Sequence[Fused],
             chunks: dict[int, int]) -> list[str]:
    """Each hit's best chunk text (``chunks``: doc -> chunk id of ``column``), else its whole text."""
    by_chunk = _chunk_texts(db, table, column, sorted(set(chunks.values()))) if column else {}
    whole = [h.doc_id for h in hits if chunks.get(h.doc_id) not in by_chunk]
    by_doc = _document_texts(db, table, column, whole) if whole else {}
    return [by_chunk.get(chunks.get(h.doc_id, -1)) or by_doc.get(h.doc_id) or "" for h in hits]


def apply(db: Database, table: Table, column: str | None, fused: list[Fused], chunks: dict[int, int],
          model: str, window: int, text: str) -> tuple[list[Fused], dict[int, float]]:
    """The fused list with its first ``window`` rows reordered by the cross-encoder, and their scores."""
    head, tail = fused[:window], fused[window:]
    if not head:
        return fused, {}
    encoder = rerank.get(model)
    scores = encoder.scores(text, passages(db, table, column, head, chunks), should_stop=db.check_cancelled)
    order = sorted(range(len(head)), key=lambda i: (-scores[i], i))
    return [head[i] for i in order] + tail, {head[i].doc_id: float(scores[i]) for i in order}
