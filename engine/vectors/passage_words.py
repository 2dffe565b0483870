"""Which chunk of a found document answers a text query: the query's words count as well as its vector.

A document is found by its nearest chunk (knn's MaxP) or by its best BM25 chunk (hybrid_match's text
side); the passage shown for it (``knn_chunk_text()``, ``knn_chunks(n)``, MCP ``search``, the
LangChain and LlamaIndex stores) is the chunk with the highest

    similarity(distance) + WORDS_WEIGHT * bm25 / (the document's best chunk bm25)

where similarity is knn_score()'s (``1 - distance`` for cosine and ip, ``1 / (1 + distance)`` for l2)
and bm25 is the BM25 of the chunk's own text (the body field of the column's chunk full-text index,
hybrid_match()'s: English stemming, English stop words left out, any word may match). The heading
field is left out here: the chunks of one section share it, and a chunk that starts at its heading
has the heading in its text already, so counting it would favour the short tail chunks of a matching
section. A document none of whose chunks holds a query word keeps its nearest chunk; a query by
vector or by document id has no words, so its passage is the nearest chunk as before. Measured on
the manual's questions (docs/benchmarks.md, section "Passages"): the answer's chunk is chosen more
often than by the vector alone or by BM25 alone, weights from 0.5 to 2 within a question or two.

The cost is one FTS5 query (the chunks holding a query word, joined to the found documents' chunks)
and no model call.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from tesseradb.catalog import fulltext as catalog_fulltext
from tesseradb.context import Context
from tesseradb.errors import UserError
from tesseradb.grammar.match_fts5 import MATCH_NOTHING, to_fts5
from tesseradb.grammar.match import MatchError
from tesseradb.grammar.match_mysql import parse_against
from tesseradb.grammar.stopwords import ENGLISH
from tesseradb.storage.catalog import quote
from tesseradb.storage.fulltext import ChunkTextIndex

if TYPE_CHECKING:
    from tesseradb.catalog.tables import Table

WORDS_WEIGHT = 1.0

Words = dict[int, dict[int, float]]      # doc id -> {chunk ordinal (0-based): bm25 > 0}


def expression(table: "Table", text: str | None) -> str | None:
    """The FTS5 expression of ``text`` read as natural language (hybrid_match()'s text side), or None."""
    if not text or not text.strip():
        return None
    try:
        tree = parse_against(text, [], boolean=False)
    except (MatchError, UserError):
        return None
    found = to_fts5(tree, list(ChunkTextIndex.COLUMNS), catalog_fulltext.stopwords(table) | ENGLISH)
    return None if found in (None, MATCH_NOTHING) else found


def scores(db: Context, table: "Table", column: str, text: str | None, doc_ids: Sequence[int]) -> Words:
    """Each chunk of ``doc_ids`` whose text holds a word of ``text``, with its BM25 (higher is better)."""
    index = catalog_fulltext.chunk_index(table, column)
    query = expression(table, text) if index is not None and doc_ids else None
    if query is None:
        return {}
    fts, chunks = quote(index.name), quote(index.chunks)
    # every chunk holding a query word is scored, then joined to the documents' chunks: FTS5 answers a
    # MATCH with ``rowid IN (...)`` one rowid at a time (~1 ms each), the whole match list in one pass.
    # MATERIALIZED: bm25() must run in the FTS5 scan, not in the join
    sql = (f"WITH x AS MATERIALIZED (SELECT rowid AS chunk_id, -bm25({fts}, 0.0, 1.0) AS s FROM {fts}(?)) "
           f"SELECT k.doc_id, k.ord, x.s FROM x JOIN {chunks} AS k ON k.chunk_id = x.chunk_id "
           "WHERE k.doc_id IN (SELECT value FROM json_each(?))")
    out: Words = {}
    for doc, ordinal, score in db.store.execute(sql, (query, json.dumps(sorted({int(d) for d in doc_ids})))):
        if score is not None and score > 0:
            out.setdefault(int(doc), {})[int(ordinal)] = float(score)
    return out


def relevance(dist: np.ndarray, metric: str, words: dict[int, float] | None) -> np.ndarray:
    """Each chunk's score for being the document's passage (higher is better); ``dist``: its distances."""
    d = np.maximum(dist, 0.0)
    score = 1.0 / (1.0 + d) if metric == "l2" else np.maximum(0.0, 1.0 - dist)
    if words:
        lexical = np.zeros(len(dist), dtype=np.float64)
        for ordinal, value in words.items():
            if 0 <= ordinal < len(lexical):
                lexical[ordinal] = value
        top = lexical.max()
        if top > 0:
            score = score + WORDS_WEIGHT * lexical / top
    return score
