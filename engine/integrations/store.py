"""The framework-neutral part of the integrations: documents in a tesseradb table, through the DB-API.

One row per document: the caller's id in a unique column, the text, the metadata (json, or the
table's own columns), the vectors (a model-backed column the engine fills, or supplied vectors).
Searches are knn() and hybrid_match() queries whose filters are bound conditions of the same WHERE,
so they apply before the k nearest are chosen.
"""
from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import tesseradb

from . import filters as filter_sql
from .layout import Layout, VectorColumn

_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)
_WORD = re.compile(r"\w+")
_IN_JSON = "(SELECT value FROM json_each(?))"


@dataclass
class Passage:
    """The chunk of the document that matched: 1-based ordinal, character offsets, text, and the
    Markdown heading of its section."""
    chunk: int | None
    start: int | None
    end: int | None
    text: str | None
    heading: str | None = None
    section: str | None = None          # knn_chunk_section(): the passage's whole section

    def as_dict(self) -> dict[str, Any]:
        return {"chunk": self.chunk, "start": self.start, "end": self.end, "heading": self.heading}


#: What a search returns of each document (the stores' ``passages=``): ``"auto"`` (the default) the
#: matched chunk when the document is longer than one chunk, else the document exactly as added;
#: ``"chunk"`` (``True``) always the chunk; ``"section"`` its section; ``"document"`` (``False``) the whole
#: document.
PASSAGE_KEY = "tessera"     # the one reserved metadata key: a passage's details, when it is part of a document
PASSAGE_MODES = {None: "auto", "auto": "auto", True: "chunk", "chunk": "chunk", "section": "section",
                 False: "document", "document": "document"}


def short_float(value: Any) -> float:
    """A distance or score (computed in float32) as its shortest float32 text reads: 0.4066, not
    0.40655264258384705."""
    return float(str(np.float32(value)))


def passage_mode(value: Any) -> str:
    try:
        return PASSAGE_MODES[value]
    except (KeyError, TypeError):
        raise ValueError(f"passages must be one of None/'auto', True/'chunk', 'section', False/'document'; "
                         f"got {value!r}") from None


def wants_passages(mode: str, column: "VectorColumn") -> bool:
    """Whether the search must read the matched chunk: always when asked for, and by default for a
    column that stores several chunks per document."""
    return mode in ("chunk", "section") or (mode == "auto" and column.type == "float_vector_array")


def passage_of(hit: "Hit", mode: str) -> tuple[str, "Passage | None"]:
    """(the text to return, the passage it is part of, or None when it is the whole document)."""
    passage = hit.passage
    if mode == "document" or passage is None or passage.text is None:
        return hit.content, None
    text = passage.section if mode == "section" and passage.section else passage.text
    if text.strip() == hit.content.strip():
        return hit.content, None            # the passage is the whole document: exactly as it was added
    return text, passage


@dataclass
class Hit:
    id: str
    content: str
    metadata: dict[str, Any]
    distance: float | None = None      # knn_dist(): smaller is nearer
    score: float | None = None         # hybrid_score(): larger is better
    passage: Passage | None = None
    vector: Any = None                 # the matched vector (for MMR)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Row:
    id: str
    content: str
    metadata: Mapping[str, Any]
    vectors: dict[str, Any] = field(default_factory=dict)     # column -> value (omitted: the engine embeds)
    extra: dict[str, Any] = field(default_factory=dict)       # further role columns (e.g. ref_doc_id)


def connect(database: Any) -> tuple[tesseradb.Connection, bool]:
    """(connection, whether we opened it): ``database`` is a path or an open tesseradb Connection."""
    if isinstance(database, tesseradb.Connection):
        return database, False
    if isinstance(database, (str, os.PathLike)):
        return tesseradb.connect(os.fspath(database)), True
    raise TypeError(f"database must be a path or a tesseradb Connection, not {type(database).__name__}")


def heading_of(text: str, start: int | None, end: int | None) -> str | None:
    """The passage's section: the last Markdown heading of ``text`` that starts before the passage
    ends (a heading inside the passage counts: a chunk often begins just above its heading)."""
    if start is None or end is None or not text:
        return None
    found = None
    for match in _HEADING.finditer(text, 0, end):
        found = match.group(1).strip()
    return found


def match_words(text: str) -> str:
    """A MATCH() query in which any word of ``text`` may match: every word a quoted one-word phrase,
    joined by OR, so that no character of the text is read as query syntax."""
    return " | ".join(f'"{w}"' for w in _WORD.findall(text))


class DocumentStore:
    """Reads and writes the documents of one table; every call holds the store's lock (the async
    variants of the frameworks run the sync ones in threads)."""

    def __init__(self, con: tesseradb.Connection, layout: Layout, owns: bool, roles: Sequence[str] = ()):
        self.con, self.layout, self.owns = con, layout, owns
        self.roles = list(roles)                 # further role columns read and written as Row.extra
        self.lock = threading.RLock()
        cols = [layout.id, layout.content, layout.metadata, *self.roles, *layout.extra.values()]
        self._select = ", ".join(layout.qualified(c) for c in cols)

    # -- writing -----------------------------------------------------------------------------------
    def split(self, metadata: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """(the json column's text, {column: value}) for one document's metadata."""
        if not isinstance(metadata, Mapping):
            raise TypeError(f"metadata must be a dict, not {type(metadata).__name__}")
        in_json = {k: v for k, v in metadata.items() if k not in self.layout.extra}
        columns = {self.layout.extra[k]: v for k, v in metadata.items() if k in self.layout.extra}
        try:
            text = json.dumps(in_json, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"metadata must be JSON (str, number, bool, None, lists and dicts): {exc}") from None
        return text, columns

    def upsert(self, rows: Sequence[Row]) -> None:
        """Insert the rows, replacing any row with the same id (the last of repeated ids wins). In one
        transaction the rows with these ids are deleted, then the rows inserted in batches (one per set
        of supplied vector columns: a column left out is embedded by the engine, NULL would not be):
        REPLACE's meaning (a new row for the id), with the batches free to differ in their columns."""
        if not rows:
            return
        rows = list({row.id: row for row in rows}.values())
        groups: dict[tuple[str, ...], list[Row]] = {}
        for row in rows:
            groups.setdefault(tuple(sorted(row.vectors)), []).append(row)
        drop = f"DELETE FROM {self.layout.sql} WHERE {self.layout.qualified(self.layout.id)} IN {_IN_JSON}"
        with self.lock:
            try:
                self.con.execute(drop, [json.dumps([row.id for row in rows])])
                for vector_cols, group in groups.items():
                    self._insert(group, list(vector_cols))
                self.con.commit()
            except BaseException:
                self.con.rollback()
                raise

    def _insert(self, rows: list[Row], vector_cols: list[str]) -> None:
        split = [self.split(row.metadata) for row in rows]
        extra_cols = sorted({c for _, cols in split for c in cols})
        role_cols = sorted({c for row in rows for c in row.extra})
        names = [self.layout.id, self.layout.content, self.layout.metadata, *role_cols, *extra_cols, *vector_cols]
        sql = (f"INSERT INTO {self.layout.sql} ({', '.join(self.layout.col(n) for n in names)}) "
               f"VALUES ({', '.join('?' * len(names))})")
        self.con.executemany(sql, [(row.id, row.content, text, *(row.extra.get(c) for c in role_cols),
                                    *(cols.get(c) for c in extra_cols), *(row.vectors[c] for c in vector_cols))
                                   for row, (text, cols) in zip(rows, split)])

    def delete(self, ids: Iterable[str] | None = None, where: tuple[str | None, list[Any]] | None = None) -> int:
        """Delete the documents with these ids (all of them with ``ids=None`` and no ``where``)."""
        sql, params = f"DELETE FROM {self.layout.sql}", []
        if ids is not None:
            sql, params = sql + f" WHERE {self.layout.qualified(self.layout.id)} IN {_IN_JSON}", [json.dumps(list(ids))]
        elif where is not None:
            if not where[0]:
                raise ValueError("a delete by filter needs a filter")
            sql, params = sql + f" WHERE {where[0]}", list(where[1])
        with self.lock:
            try:
                count = self.con.execute(sql, params).rowcount
                self.con.commit()
            except BaseException:
                self.con.rollback()
                raise
        return count

    # -- reading -----------------------------------------------------------------------------------
    def where(self, tree: filter_sql.Filter | None) -> tuple[str | None, list[Any]]:
        return filter_sql.compile_filter(tree, self.layout.extra_sql(), self.layout.col(self.layout.metadata),
                                         self.layout.sql)

    def get(self, ids: Sequence[str] | None = None, where: tuple[str | None, list[Any]] = (None, [])) -> list[Hit]:
        """Documents by id (in the order asked, missing ones left out) or by filter (in row order)."""
        conditions, params = [], []
        if ids is not None:
            conditions.append(f"{self.layout.qualified(self.layout.id)} IN {_IN_JSON}")
            params.append(json.dumps(list(ids)))
        if where[0]:
            conditions.append(where[0])
            params.extend(where[1])
        sql = f"SELECT {self._select} FROM {self.layout.sql}"
        if conditions:
            sql += " WHERE " + " AND ".join(conditions)
        sql += f" ORDER BY {self.layout.sql}.id"
        with self.lock:
            hits = [self._hit(row) for row in self.con.execute(sql, params).fetchall()]
        if ids is None:
            return hits
        found = {h.id: h for h in hits}
        return [found[i] for i in dict.fromkeys(ids) if i in found]

    def count(self) -> int:
        with self.lock:
            return int(self.con.execute(f"SELECT COUNT(*) FROM {self.layout.sql}").fetchone()[0])

    def search(self, column: VectorColumn, query: Any, k: int, where: tuple[str | None, list[Any]] = (None, []),
               passages: bool = False, vectors: bool = False) -> list[Hit]:
        """The k nearest documents to ``query`` (a text for a model-backed column, or a vector) that
        pass the filter, nearest first."""
        if k <= 0:
            return []
        if isinstance(query, np.ndarray):
            query = query.astype(np.float32)
        select = self._select + ", knn_dist()" + (", knn_chunk()" if passages or vectors else ", NULL")
        if passages:
            select += ", knn_chunk_start(), knn_chunk_end(), knn_chunk_text(), knn_chunk_section()"
        if vectors:
            select += f", {column.sql}"
        sql = f"SELECT {select} FROM {self.layout.sql} WHERE knn({column.sql}, ?, ?)"
        params = [int(k), query]
        if where[0]:
            sql, params = sql + f" AND {where[0]}", params + list(where[1])
        with self.lock:
            rows = self.con.execute(sql, params).fetchall()
        return [self._scored(row, passages, vectors, column) for row in rows]

    def hybrid(self, column: VectorColumn, text: str, k: int, where: tuple[str | None, list[Any]] = (None, []),
               vector: Any = None, weights: tuple[float, float] | None = None, passages: bool = False) -> list[Hit]:
        """Full-text and knn() fused by reciprocal rank. With a model-backed column, no vector and no
        weights: ``hybrid_match()`` (BM25 over the column's chunks). Otherwise ``MATCH()`` over the text
        fields (any word of ``text``) and knn() with ``vector`` (or the text), weighted (text, dense)."""
        if k <= 0:
            return []
        select = self._select + ", knn_dist(), knn_chunk(), hybrid_score()"
        if passages:
            select += ", knn_chunk_start(), knn_chunk_end(), knn_chunk_text(), knn_chunk_section()"
        if column.model and vector is None and weights is None:
            sql = f"SELECT {select} FROM {self.layout.sql} WHERE hybrid_match(?, {column.sql}, {{k={int(k)}}})"
            params, option = [text], ""
        else:
            text_w, dense_w = (1.0, 1.0) if weights is None else (_weight(weights[0]), _weight(weights[1]))
            sql = (f"SELECT {select} FROM {self.layout.sql} WHERE MATCH(?) AS text_side "
                   f"AND knn({column.sql}, ?, ?) AS dense_side")
            params = [match_words(text), int(k), text if vector is None else _vector(vector)]
            option = (f" OPTION fusion_method='rrf', fusion_weights=(text_side={text_w!r}, "
                      f"dense_side={dense_w!r})")
        if where[0]:
            sql, params = sql + f" AND {where[0]}", params + list(where[1])
        sql += f" LIMIT {int(k)}" + option
        with self.lock:
            rows = self.con.execute(sql, params).fetchall()
        return [self._scored(row, passages, False, column, hybrid=True) for row in rows]

    def close(self) -> None:
        if self.owns:
            self.con.close()

    # -- rows to hits ------------------------------------------------------------------------------
    def _hit(self, row: Sequence[Any]) -> Hit:
        doc_id, content, meta = row[0], row[1], row[2]
        n = 3 + len(self.roles)
        metadata = dict(meta) if isinstance(meta, dict) else {}
        for key, value in zip(self.layout.extra, row[n:n + len(self.layout.extra)]):
            if value is not None:
                metadata[key] = value
        return Hit(doc_id, content or "", metadata, extra=dict(zip(self.roles, row[3:n])))

    def _scored(self, row: Sequence[Any], passages: bool, vectors: bool, column: VectorColumn,
                hybrid: bool = False) -> Hit:
        width = 3 + len(self.roles) + len(self.layout.extra)
        hit = self._hit(row[:width])
        rest = list(row[width:])
        hit.distance, chunk = rest[0], rest[1]
        if hybrid:
            hit.score = rest[2]
            rest = rest[1:]
        if passages:
            start, end, text, section = rest[2], rest[3], rest[4], rest[5]
            hit.passage = Passage(chunk, start, end, text, heading_of(hit.content, start, end), section)
        if vectors:
            value = rest[-1]
            if column.type == "float_vector_array":
                value = value[(chunk or 1) - 1] if value else None
            hit.vector = np.asarray(value, dtype=np.float32) if value is not None else None
        return hit


def _weight(value: float) -> float:
    weight = float(value)
    if not 0.0 <= weight <= 1e6:
        raise ValueError(f"a fusion weight must be a non-negative number, not {value!r}")
    return weight


def _vector(value: Any) -> Any:
    return np.asarray(value, dtype=np.float32)
