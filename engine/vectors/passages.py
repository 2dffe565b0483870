"""Which passage matched: the chunks of the documents a knn() search returned, scored exactly.

For every hit document, each of its chunk vectors is compared with the query (all query vectors of a
document-id query; a chunk's distance is its smallest), the chunks are ranked by distance (ties by
ordinal), and each one's span is cut from the text the column embedded. The rows go to a TEMP table
that the rewritten query reads (``knn_chunk()``, ``knn_chunk_text()``, ``knn_chunk_start()``,
``knn_chunk_end()``, ``knn_chunks(n)``; see ``tesseradb.sql.passage_calls``).

Offsets are Python ``str`` indices (code points) into the source text, the ``from`` columns joined
with one space exactly as the embedder joined them; spans are what the model saw
(``tesseradb.embed.spans``). Supplied vectors have no text: their text and offsets are NULL.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from tesseradb.storage.catalog import quote
from tesseradb.storage.blobs import unpack

from tesseradb import embed
from tesseradb.context import Context
from tesseradb.embed.rows import source_text
from tesseradb.embed.spans import kept_end, may_be_cut

if TYPE_CHECKING:
    from tesseradb.catalog.tables import Table
    from tesseradb.vectors.options import VectorSpec

TABLE = "_tessera_passages"
CREATE_TABLE = (f"CREATE TEMP TABLE IF NOT EXISTS {TABLE} (doc_id INTEGER NOT NULL, rank INTEGER NOT NULL, "
                "chunk INTEGER NOT NULL, dist REAL NOT NULL, start INTEGER, \"end\" INTEGER, text TEXT, "
                "PRIMARY KEY (doc_id, rank)) WITHOUT ROWID")
_F32_MAX = float(np.finfo(np.float32).max)


@dataclass(frozen=True)
class Needs:
    """What the query asks for: each document's ``limit`` nearest chunks (1 unless ``knn_chunks(n)``
    asks for more), and whether texts and offsets are read (else only ordinals and distances)."""
    limit: int
    text: bool


@dataclass(frozen=True)
class Passage:
    doc_id: int
    rank: int               # 1 = the document's nearest chunk
    chunk: int              # 1-based ordinal, as LENGTH(col) counts
    dist: float
    start: int | None
    end: int | None
    text: str | None


_ChunkRow = tuple          # (ord, start, end) of one chunk row: plain tuples, a document may have thousands


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
    """(doc, ord) -> (ord, start, end), for the chosen chunks only (one query, on the doc_id index)."""
    sql = (f"SELECT c.doc_id, c.ord, c.start, c.\"end\" FROM json_each(?) AS j CROSS JOIN {quote(chunks_table)} AS c "
           "ON c.doc_id = json_extract(j.value, '$[0]') AND c.ord = json_extract(j.value, '$[1]')")
    return {(doc, row[0]): tuple(row) for doc, *row in db.store.execute(sql, (json.dumps(picks),))}


def rank_chunks(db: Context, table: "Table", column: str, queries: np.ndarray, doc_ids: Sequence[int],
                limit: int | None = None) -> dict[int, tuple[list[tuple[float, _ChunkRow]], int]]:
    """doc id -> (its ``limit`` nearest chunks as (distance, (ord, start, end)), nearest first, ties to
    the lower ordinal; its number of chunks). Every vector of the document is scored; only the chunk
    rows of the chosen ones are read (a document's vector i is its chunk of ordinal i)."""
    layout = table.layout(column)
    docs = sorted({int(d) for d in doc_ids})
    if not docs or queries is None or not len(queries):
        return {}
    sql = (f"SELECT id, {quote(layout.column)} FROM {quote(layout.table)} "
           "WHERE id IN (SELECT value FROM json_each(?))")
    queries = queries.astype(np.float32)
    chosen: dict[int, tuple[np.ndarray, list[int], int]] = {}
    for doc, blob in db.store.execute(sql, (json.dumps(docs),)):
        vectors = unpack(blob, layout.is_array)
        if len(vectors) and vectors.shape[1] == layout.dims:
            dist = distances(vectors, queries, layout.metric)
            chosen[doc] = (dist, np.argsort(dist, kind="stable")[:limit].tolist(), len(vectors))
    spans = _spans(db, layout.chunks, [(doc, i) for doc, (_, best, _) in chosen.items() for i in best])
    return {doc: ([(_as_float32(float(dist[i])), spans[doc, i]) for i in best if (doc, i) in spans], count)
            for doc, (dist, best, count) in chosen.items()}


def _source_texts(db: Context, table: "Table", spec: "VectorSpec", doc_ids: Iterable[int]) -> dict[int, str]:
    if not spec.model_name:
        return {}
    names = list(dict.fromkeys(c.lower() for c in spec.from_columns))
    cols = ", ".join(quote(table.column(n).name) for n in names)
    sql = f"SELECT id, {cols} FROM {quote(table.name)} WHERE id IN (SELECT value FROM json_each(?))"
    return {row[0]: source_text(spec, dict(zip(names, row[1:])))
            for row in db.store.execute(sql, (json.dumps(sorted(doc_ids)),))}


def span_of(spec: "VectorSpec", model: Any, text: str | None, row: _ChunkRow,
            n_chunks: int) -> tuple[int | None, int | None, str | None]:
    """(start, end, text) of a chunk as the model saw it; NULLs for supplied vectors."""
    ordinal, start, end = row
    if text is None or start is None or end is None:
        return None, None, None
    end = min(end, len(text))
    if model is not None and may_be_cut(spec.chunk_strategy, spec.max_chunks, ordinal, n_chunks):
        end = kept_end(model, text, start, end)
    return start, end, text[start:end]


def passages(db: Context, table: "Table", column: str, queries: np.ndarray, doc_ids: Sequence[int],
             needs: Needs) -> list[Passage]:
    """The ``needs.limit`` nearest chunks of each of ``doc_ids``, ranked."""
    spec = table.vectors[column.lower()]
    ranked = rank_chunks(db, table, column, queries, doc_ids, needs.limit)
    texts = _source_texts(db, table, spec, ranked) if needs.text else {}
    model = embed.get_model(spec.model_name) if texts else None
    out = []
    for doc, (chunks, n_chunks) in ranked.items():
        for rank, (dist, row) in enumerate(chunks, start=1):
            start, end, text = span_of(spec, model, texts.get(doc), row, n_chunks)
            out.append(Passage(doc, rank, row[0] + 1, dist, start, end, text))
    return out


def fill(db: Context, table: "Table", column: str, queries: np.ndarray, doc_ids: Sequence[int], needs: Needs) -> None:
    """Write the passages of ``doc_ids`` into the TEMP table the rewritten query reads."""
    rows = passages(db, table, column, queries, doc_ids, needs)
    db.store.execute(CREATE_TABLE)
    db.store.execute(f"DELETE FROM temp.{TABLE}")
    db.store.executemany(f"INSERT INTO temp.{TABLE} VALUES (?, ?, ?, ?, ?, ?, ?)",
                         [(p.doc_id, p.rank, p.chunk, p.dist, p.start, p.end, p.text) for p in rows])
