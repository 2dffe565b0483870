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
from tesseradb.storage.chunks import read_vectors

from tesseradb import embed
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
    """What the query asks for: every chunk ranked (``knn_chunks(n)``) or only the best one; and
    whether texts and offsets are read (else only ordinals and distances)."""
    all_chunks: bool
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


@dataclass(frozen=True)
class _ChunkRow:
    chunk_id: int
    ord: int
    start: int | None
    end: int | None


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


def _chunk_rows(db: Any, chunks_table: str, doc_ids: list[int]) -> dict[int, list[_ChunkRow]]:
    out: dict[int, list[_ChunkRow]] = {}
    sql = (f"SELECT doc_id, chunk_id, ord, start, \"end\" FROM {quote(chunks_table)} "
           "WHERE doc_id IN (SELECT value FROM json_each(?)) ORDER BY doc_id, ord")
    for doc, chunk_id, ord_, start, end in db.store.execute(sql, (json.dumps(doc_ids),)):
        out.setdefault(doc, []).append(_ChunkRow(chunk_id, ord_, start, end))
    return out


def rank_chunks(db: Any, table: "Table", column: str, queries: np.ndarray,
                doc_ids: Sequence[int]) -> dict[int, list[tuple[float, _ChunkRow]]]:
    """doc id -> [(distance, chunk)] of every chunk with a vector, nearest first (ties: lower ordinal)."""
    layout = table.layout(column)
    docs = sorted({int(d) for d in doc_ids})
    if not docs or queries is None or not len(queries):
        return {}
    chunk_ids, _, vectors = read_vectors(db.store, layout, "WHERE c.doc_id IN (SELECT value FROM json_each(?))",
                                         (json.dumps(docs),))
    dist = dict(zip(chunk_ids.tolist(), distances(vectors, queries.astype(np.float32), layout.metric).tolist()))
    ranked = {}
    for doc, rows in _chunk_rows(db, layout.chunks, docs).items():
        scored = [(_as_float32(dist[r.chunk_id]), r) for r in rows if r.chunk_id in dist]
        scored.sort(key=lambda item: (item[0], item[1].ord))
        if scored:
            ranked[doc] = scored
    return ranked


def _source_texts(db: Any, table: "Table", spec: "VectorSpec", doc_ids: Iterable[int]) -> dict[int, str]:
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
    if text is None or row.start is None or row.end is None:
        return None, None, None
    start, end = row.start, min(row.end, len(text))
    if model is not None and may_be_cut(spec.chunk_strategy, spec.max_chunks, row.ord, n_chunks):
        end = kept_end(model, text, start, end)
    return start, end, text[start:end]


def passages(db: Any, table: "Table", column: str, queries: np.ndarray, doc_ids: Sequence[int],
             needs: Needs) -> list[Passage]:
    """The ranked chunks of ``doc_ids`` (only each document's best one unless ``needs.all_chunks``)."""
    spec = table.vectors[column.lower()]
    ranked = rank_chunks(db, table, column, queries, doc_ids)
    if not needs.all_chunks:
        ranked = {doc: chunks[:1] for doc, chunks in ranked.items()}
    texts = _source_texts(db, table, spec, ranked) if needs.text else {}
    model = embed.get_model(spec.model_name) if texts else None
    out = []
    for doc, chunks in ranked.items():
        n_chunks = _chunk_count(db, table, column, doc) if model is not None and spec.max_chunks else 0
        for rank, (dist, row) in enumerate(chunks, start=1):
            start, end, text = span_of(spec, model, texts.get(doc), row, n_chunks)
            out.append(Passage(doc, rank, row.ord + 1, dist, start, end, text))
    return out


def _chunk_count(db: Any, table: "Table", column: str, doc_id: int) -> int:
    return int(db.store.one(f"SELECT COUNT(*) FROM {quote(table.layout(column).chunks)} WHERE doc_id = ?",
                            (doc_id,))[0])


def fill(db: Any, table: "Table", column: str, queries: np.ndarray, doc_ids: Sequence[int], needs: Needs) -> None:
    """Write the passages of ``doc_ids`` into the TEMP table the rewritten query reads."""
    rows = passages(db, table, column, queries, doc_ids, needs)
    db.store.execute(CREATE_TABLE)
    db.store.execute(f"DELETE FROM temp.{TABLE}")
    db.store.executemany(f"INSERT INTO temp.{TABLE} VALUES (?, ?, ?, ?, ?, ?, ?)",
                         [(p.doc_id, p.rank, p.chunk, p.dist, p.start, p.end, p.text) for p in rows])
