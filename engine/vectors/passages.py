"""Which passage matched: the chunk each document of a knn() search matched, and its n best chunks.

* ``knn_chunk()``, ``knn_chunk_text()``, ``knn_chunk_start()``, ``knn_chunk_end()``: the chunk that
  gave the document its ``knn_dist()``, i.e. the chunk id the search found (cheap: one chunk row and
  one substring per document, no vectors read). In a hybrid query, where a document may come from the
  full-text side alone, every chunk of each row's document is scored exactly instead.
* ``knn_chunks(n)``: every chunk vector of the document compared with the query (all query vectors of
  a document-id query; a chunk's distance is its smallest), ranked by distance, ties by ordinal.

The rows go to TEMP tables that the rewritten query reads (``tesseradb.sql.search.passage_calls``). Offsets
are Python ``str`` indices (code points) into the source text, the ``from`` columns joined with one
space exactly as the embedder joined them; SQLite's ``substr`` counts the same characters, so the text
is cut in SQL (a long page is never copied into Python). With ``markdown`` the columns are joined
with a blank line instead (``separator_sql``). Spans are what the model saw
(``tesseradb.embed.spans``). Supplied vectors have no text: their text and offsets are NULL.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from tesseradb.storage.catalog import quote
from tesseradb.storage.blobs import unpack

from tesseradb import embed
from tesseradb.context import Context
from tesseradb.embed.spans import kept_end, may_be_cut
from tesseradb.vectors import mmr, passage_units, passage_words
from tesseradb.vectors.knn_rank import similarity

if TYPE_CHECKING:
    from tesseradb.catalog.tables import Table
    from tesseradb.catalog.vector_columns import VectorSpec

TABLE = "_tessera_passages"           # knn_chunks(n): (doc, rank) -> chunk
BEST_TABLE = "_tessera_passage"       # knn_chunk*(): doc -> the chunk it matched
CREATE_TABLE = (f"CREATE TEMP TABLE IF NOT EXISTS {TABLE} (doc_id INTEGER NOT NULL, rank INTEGER NOT NULL, "
                "chunk INTEGER NOT NULL, dist REAL NOT NULL, start INTEGER, \"end\" INTEGER, text TEXT, heading TEXT, "
                "PRIMARY KEY (doc_id, rank)) WITHOUT ROWID")
CREATE_BEST_TABLE = (f"CREATE TEMP TABLE IF NOT EXISTS {BEST_TABLE} (doc_id INTEGER PRIMARY KEY, "
                     "chunk INTEGER NOT NULL, dist REAL, start INTEGER, \"end\" INTEGER, text TEXT, heading TEXT)")
_F32_MAX = float(np.finfo(np.float32).max)


@dataclass(frozen=True)
class Needs:
    """What the query reads: the matched chunk (``best``), each document's ``limit`` nearest chunks
    (``knn_chunks(n)``; 0: none), and whether texts and offsets are read."""
    best: bool
    limit: int
    text: bool
    mmr: float | None = None        # knn_chunks(n, {mmr=λ}): the n passages picked by MMR


@dataclass(frozen=True)
class Passage:
    doc_id: int
    rank: int               # 1 = the document's nearest chunk
    chunk: int              # 1-based ordinal, as LENGTH(col) counts
    dist: float
    start: int | None
    end: int | None
    text: str | None
    heading: str | None = None


_ChunkRow = tuple          # (ord, start, end, heading) of one chunk row: plain tuples, a document may have thousands


def distances(vectors: np.ndarray, queries: np.ndarray, metric: str) -> np.ndarray:
    """Each row's distance to the nearest of ``queries`` (the metrics of ``hnsw_similarity``)."""
    best = np.full(len(vectors), np.inf, dtype=np.float64)
    for q in queries:
        if metric == "l2":
            diff = vectors - q
            d = np.einsum("ij,ij->i", diff, diff)
        else:
            d = 1.0 - vectors @ q
        best = np.minimum(best, d)
    return best


def _as_float32(d: float) -> float:
    return float(np.float32(d)) if abs(d) <= _F32_MAX else float(d)


def _spans(db: Context, chunks_table: str, picks: list[tuple[int, int]]) -> dict[tuple[int, int], _ChunkRow]:
    """(doc, ord) -> (ord, start, end, heading), for the chosen chunks only (one query, on the doc_id index)."""
    sql = (f"SELECT c.doc_id, c.ord, c.start, c.\"end\", c.heading FROM json_each(?) AS j "
           f"CROSS JOIN {quote(chunks_table)} AS c "
           "ON c.doc_id = json_extract(j.value, '$[0]') AND c.ord = json_extract(j.value, '$[1]')")
    return {(doc, row[0]): tuple(row) for doc, *row in db.store.execute(sql, (json.dumps(picks),))}


def rank_chunks(db: Context, table: "Table", column: str, queries: np.ndarray, doc_ids: Sequence[int],
                limit: int | None = None, diversity: float | None = None,
                words: passage_words.Words | None = None,
                units: bool = False) -> dict[int, tuple[list[tuple[float, _ChunkRow]], int]]:
    """doc id -> (its ``limit`` best chunks as (distance, (ord, start, end)), best first, ties to the
    lower ordinal; its number of chunks). Best: nearest, or with ``words`` (the query's BM25 per chunk,
    ``passage_words.scores``) the highest ``passage_words.relevance``; with ``units`` (a text query on
    a column with passage units) that score rescored by the units (``passage_units.rescore``). Every
    vector of the document is scored; only the chunk rows of the chosen ones are read (a document's
    vector i is its chunk of ordinal i)."""
    layout = table.layout(column)
    docs = sorted({int(d) for d in doc_ids})
    if not docs or queries is None or not len(queries):
        return {}
    sql = (f"SELECT id, {quote(layout.column)} FROM {quote(layout.table)} "
           "WHERE id IN (SELECT value FROM json_each(?))")
    queries = queries.astype(np.float32)
    found: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for doc, blob in db.store.execute(sql, (json.dumps(docs),)):
        vectors = unpack(blob, layout.is_array)
        if len(vectors) and vectors.shape[1] == layout.dims:
            found[doc] = (vectors, distances(vectors, queries, layout.metric))
    scored: dict[int, np.ndarray | None] = {
        doc: passage_words.relevance(dist, layout.metric, (words or {}).get(doc))
        if units or (words or {}).get(doc) else None
        for doc, (_, dist) in found.items()}
    if units and found:
        scored.update(passage_units.rescore(db, layout, queries[0], {d: s for d, s in scored.items() if s is not None},
                                            {d: v for d, (v, _) in found.items()}))
    chosen = {doc: (dist, _pick(vectors, dist, layout.metric, limit, diversity, scored[doc]), len(vectors))
              for doc, (vectors, dist) in found.items()}
    spans = _spans(db, layout.chunks, [(doc, i) for doc, (_, best, _) in chosen.items() for i in best])
    return {doc: ([(_as_float32(float(dist[i])), spans[doc, i]) for i in best if (doc, i) in spans], count)
            for doc, (dist, best, count) in chosen.items()}


def _pick(vectors: np.ndarray, dist: np.ndarray, metric: str, limit: int | None, diversity: float | None,
          scored: np.ndarray | None = None) -> list[int]:
    """The chunks to report: the nearest ``limit`` (with ``scored``: the highest scores, words and
    units counted, passage_words.py and passage_units.py), or with ``diversity`` the ``limit`` MMR
    picks among the document's chunks (relevance = knn's similarity, vectors/knn_rank.py, or the score)."""
    order = np.argsort(dist if scored is None else -scored, kind="stable")
    if diversity is None or limit is None:
        return order[:limit].tolist()
    pool = order[:max(4 * limit, 50)]
    relevance = scored[pool] if scored is not None else np.array([similarity(float(d), metric) for d in dist[pool]])
    picks, _ = mmr.select(vectors[pool], relevance, limit, diversity)
    return [int(pool[i]) for i in picks]


def _source_sql(table: "Table", spec: "VectorSpec") -> str:
    """SQL for the text a model column embeds (``embed.rows.source_text``): the ``from`` columns,
    NULL as empty, joined as ``embed.rows.separator`` says."""
    return f" || {separator_sql(spec)} || ".join(f"COALESCE(t.{quote(table.column(c).name)}, '')" for c in spec.from_columns)


def separator_sql(spec: "VectorSpec") -> str:
    """``embed.rows.separator`` as an SQL expression."""
    return "char(10, 10)" if spec.chunk_strategy == "markdown" else "' '"


def _texts(db: Context, table: "Table", spec: "VectorSpec",
           spans: list[tuple[int, int, int]]) -> dict[tuple[int, int], str]:
    """(doc, start) -> the source text's characters [start, end), for (doc, start, end) spans."""
    if not spec.model_name or not spans:
        return {}
    sql = (f"SELECT j.value ->> 0, j.value ->> 1, substr({_source_sql(table, spec)}, (j.value ->> 1) + 1, "
           f"(j.value ->> 2) - (j.value ->> 1)) FROM json_each(?) AS j CROSS JOIN {quote(table.name)} AS t "
           "ON t.id = j.value ->> 0")
    return {(doc, start): text for doc, start, text in db.store.execute(sql, (json.dumps(spans),))}


def _with_text(db: Context, table: "Table", spec: "VectorSpec", rows: list[tuple], counts: dict[int, int],
               needs: Needs) -> list[Passage]:
    """rows: (doc, rank, ord, dist, start, end, heading) -> Passages, with the text the model saw of each span."""
    if not needs.text:
        return [Passage(d, r, o + 1, dist, None, None, None, h) for d, r, o, dist, _, _, h in rows]
    texts = _texts(db, table, spec, [(d, s, e) for d, _, _, _, s, e, _ in rows if s is not None and e is not None])
    model = embed.spec_model(spec, db.remote_access) if texts else None
    out = []
    for doc, rank, ordinal, dist, start, end, heading in rows:
        text = texts.get((doc, start))
        if text is None:
            out.append(Passage(doc, rank, ordinal + 1, dist, None, None, None, heading))
            continue
        if may_be_cut(spec.chunk_strategy, spec.max_chunks, ordinal, counts.get(doc, 0)):
            text = text[:kept_end(model, text, 0, len(text))]
        out.append(Passage(doc, rank, ordinal + 1, dist, start, start + len(text), text, heading))
    return out


def ranked(db: Context, table: "Table", column: str, queries: np.ndarray, doc_ids: Sequence[int],
           needs: Needs, limit: int, words: passage_words.Words | None = None, units: bool = False) -> list[Passage]:
    """The ``limit`` best chunks of each of ``doc_ids``, every chunk scored exactly (``rank_chunks``)."""
    spec = table.vectors[column.lower()]
    scored = rank_chunks(db, table, column, queries, doc_ids, limit, needs.mmr if limit == needs.limit else None,
                         words, units)
    rows = [(doc, rank, row[0], dist, row[1], row[2], row[3]) for doc, (chunks, _) in scored.items()
            for rank, (dist, row) in enumerate(chunks, start=1)]
    return _with_text(db, table, spec, rows, {doc: n for doc, (_, n) in scored.items()}, needs)


def matched(db: Context, table: "Table", column: str, hits: Sequence[tuple[int, float, int]],
            needs: Needs) -> list[Passage]:
    """The chunk each (doc, dist, chunk_id) hit of the search matched."""
    spec = table.vectors[column.lower()]
    layout = table.layout(column)
    dist = {chunk: d for _, d, chunk in hits}
    count = (f"(SELECT COUNT(*) FROM {quote(layout.chunks)} AS n WHERE n.doc_id = c.doc_id)"
             if spec.max_chunks else "0")                 # only max_chunks makes the last chunk special
    sql = (f"SELECT c.doc_id, c.chunk_id, c.ord, c.start, c.\"end\", {count}, c.heading "
           f"FROM {quote(layout.chunks)} AS c WHERE c.chunk_id IN (SELECT value FROM json_each(?))")
    found = list(db.store.execute(sql, (json.dumps([c for _, _, c in hits if c is not None]),)))
    rows = [(doc, 1, ordinal, dist[chunk], start, end, heading)
            for doc, chunk, ordinal, start, end, _, heading in found]
    return _with_text(db, table, spec, rows, {r[0]: r[5] for r in found}, needs)


def fill(db: Context, table: "Table", column: str, queries: np.ndarray, doc_ids: Sequence[int], needs: Needs,
         hits: Sequence[tuple[int, float, int]] | None = None, text: str | None = None) -> None:
    """Write the TEMP tables the rewritten query reads, for the documents ``doc_ids``: each one's best
    chunk and, for ``knn_chunks(n)``, its ranked chunks. With the query's ``text``, best means vector
    and words together (passage_words.py), and on a column with passage units the units too
    (passage_units.py); without, the nearest: the matched chunk of the search's ``hits``, else every
    chunk scored exactly."""
    words = passage_words.scores(db, table, column, text, doc_ids) if text else None
    units = bool(text) and table.vectors[column.lower()].passage_units != "none"
    if needs.best:
        best = matched(db, table, column, hits, needs) if hits is not None and not words and not units else \
            ranked(db, table, column, queries, doc_ids, needs, 1, words, units)
        db.store.execute(CREATE_BEST_TABLE)
        db.store.execute(f"DELETE FROM temp.{BEST_TABLE}")
        db.store.executemany(f"INSERT INTO temp.{BEST_TABLE} VALUES (?, ?, ?, ?, ?, ?, ?)",
                             [(p.doc_id, p.chunk, p.dist, p.start, p.end, p.text, p.heading) for p in best])
    if needs.limit:
        rows = ranked(db, table, column, queries, doc_ids, needs, needs.limit, words, units)
        db.store.execute(CREATE_TABLE)
        db.store.execute(f"DELETE FROM temp.{TABLE}")
        db.store.executemany(f"INSERT INTO temp.{TABLE} VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                             [(p.doc_id, p.rank, p.chunk, p.dist, p.start, p.end, p.text, p.heading) for p in rows])
