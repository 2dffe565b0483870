"""SHOW CHUNKS (how stored documents were cut) and CALL CHUNKS (how any text would be cut).

Both return the same columns: ``chunk`` (1-based ordinal, as ``LENGTH(col)`` and ``knn_chunk()``
count), ``start`` and ``end`` (character offsets in the text the column embeds), ``tokens`` (the
model's tokens in the span) and ``text``; SHOW CHUNKS adds the document ``id`` first.

Why these forms: MySQL's ``SHOW ... FROM t [WHERE ...]`` family (SHOW COLUMNS, SHOW INDEX) is how a
MySQL user asks about a table's structure, and ``table.column`` names the one vector column; the
WHERE / ORDER BY / LIMIT after it choose documents exactly as a SELECT of the table would. A preview
of text that is not stored is a procedure, as Manticore's ``CALL SNIPPETS`` / ``CALL KEYWORDS``.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from sqlglot import exp

from tesseradb.grammar import ast
from tesseradb.storage.catalog import quote

from tesseradb import embed, errors
from tesseradb.errors import UserError
from tesseradb.catalog.values import bind
from tesseradb.embed.rows import check_text, source_text
from tesseradb.embed.spans import ChunkView, preview, views
from tesseradb.results import Result
from tesseradb.catalog import vector_columns
from tesseradb.sql.statements.ddl import validate

CHUNK_COLUMNS = [("chunk", "INTEGER"), ("start", "INTEGER"), ("end", "INTEGER"), ("tokens", "INTEGER"),
                 ("text", "TEXT"), ("heading", "TEXT")]
#: CALL CHUNKS adds what the model would read of each chunk (with chunk_context='heading': the context line first)
EMBEDDED_COLUMN = ("embedded", "TEXT")
#: CALL CHUNKS positional arguments after the text, and the option each one sets
POSITIONAL = ("chunk_strategy", "max_tokens", "overlap_tokens", "max_chunks")
CALL_OPTIONS = POSITIONAL + ("model_name", "chunk_context")
DEFAULT_MODEL = "Xenova/all-MiniLM-L6-v2"


def _row(view: ChunkView) -> tuple:
    return (view.chunk, view.start, view.end, view.tokens, view.text, view.heading)


# -- SHOW CHUNKS -------------------------------------------------------------------------------
def _document_ids(db: Any, stmt: ast.ShowChunks, params: Any) -> list[int]:
    select, bound = bind(stmt.documents, params)
    for node in select.find_all(exp.Table):
        if node.name.lower().startswith("_tessera_"):
            raise errors.no_such_table(node.name)
    if any(isinstance(n, exp.Anonymous) and str(n.this).lower().startswith("knn") for n in select.find_all(exp.Anonymous)):
        raise UserError("SHOW CHUNKS chooses documents with WHERE, ORDER BY and LIMIT; knn() belongs in a SELECT",
                        errors.SqlSyntaxError)
    return [r[0] for r in db.store.execute(select.sql(dialect="sqlite"), bound)]


def _only_vector_column(table: Any) -> vector_columns.VectorSpec:
    """``SHOW CHUNKS FROM t``: the table's one KNN-indexed vector column (issue 36); several: name one."""
    specs = list(table.vectors.values())
    if len(specs) == 1:
        return specs[0]
    if not specs:
        raise UserError(f"table '{table.name}' has no KNN-indexed vector column: SHOW CHUNKS lists the chunks "
                        "of one (knn_type='hnsw')", errors.SqlSyntaxError)
    named = ", ".join(f"{table.name}.{s.column}" for s in specs)
    raise UserError(f"table '{table.name}' has several vector columns; name one: SHOW CHUNKS FROM {named}",
                    errors.SqlSyntaxError)


def show_chunks(db: Any, stmt: ast.ShowChunks, params: Any = None) -> Result:
    table = db.table(stmt.table)
    spec = table.vectors.get(stmt.column.lower()) if stmt.column else _only_vector_column(table)
    if spec is None:
        if table.column(stmt.column) is None:
            raise UserError(f"Unknown column '{stmt.column}' in table '{table.name}'", errors.NoSuchColumn)
        raise UserError(f"column '{stmt.column}' has no chunks: SHOW CHUNKS lists the chunks of a "
                        "KNN-indexed vector column (knn_type='hnsw')", errors.SqlSyntaxError)
    ids = _document_ids(db, stmt, params)
    spans = _stored_spans(db, table.layout(spec.column).chunks, ids)
    texts = _texts(db, table, spec, ids)
    model = embed.spec_model(spec, db.remote_access) if spec.model_name else None
    rows = []
    for doc in ids:
        doc_spans = [(s, e) for s, e, _ in spans.get(doc, [])]
        text = texts.get(doc)
        if model is None or text is None:
            listed = [ChunkView(n, None, None, None, None) for n in range(1, len(doc_spans) + 1)]
        else:
            listed = views(model, text, doc_spans, strategy=spec.chunk_strategy, max_chunks=spec.max_chunks)
        headings = [h for _, _, h in spans.get(doc, [])]
        rows.extend((doc,) + _row(replace(v, heading=h)) for v, h in zip(listed, headings))
    return Result(columns=[("id", "INTEGER")] + CHUNK_COLUMNS, rows=rows, rowcount=len(rows))


def _stored_spans(db: Any, chunks: str, ids: list[int]) -> dict[int, list[tuple[int | None, int | None, str | None]]]:
    out: dict[int, list[tuple[int | None, int | None, str | None]]] = {}
    sql = (f"SELECT doc_id, start, \"end\", heading FROM {quote(chunks)} WHERE doc_id IN "
           "(SELECT value FROM json_each(?)) ORDER BY doc_id, ord")
    for doc, start, end, heading in db.store.execute(sql, (json.dumps(ids),)):
        out.setdefault(doc, []).append((start, end, heading))
    return out


def _texts(db: Any, table: Any, spec: Any, ids: list[int]) -> dict[int, str]:
    if not spec.model_name or not ids:
        return {}
    names = list(dict.fromkeys(c.lower() for c in spec.from_columns))
    cols = ", ".join(quote(table.column(n).name) for n in names)
    sql = f"SELECT id, {cols} FROM {quote(table.name)} WHERE id IN (SELECT value FROM json_each(?))"
    return {r[0]: source_text(spec, dict(zip(names, r[1:]))) for r in db.store.execute(sql, (json.dumps(ids),))}


# -- CALL CHUNKS -------------------------------------------------------------------------------
def _value(arg: Any, params: Any) -> Any:
    if not isinstance(arg, ast.Placeholder):
        return arg
    if params is None or isinstance(params, Mapping) or arg.index >= len(params):
        raise UserError("Incorrect number of bindings supplied for CALL CHUNKS", errors.ProgrammingError)
    return params[arg.index]


def _call_settings(stmt: ast.CallChunks, params: Any) -> tuple[str, dict[str, str]]:
    values = [_value(a, params) for a in stmt.args]
    if not values or len(values) > 1 + len(POSITIONAL):
        raise UserError("CALL CHUNKS expects (text [, chunk_strategy [, max_tokens [, overlap_tokens "
                        "[, max_chunks]]]] [, 'model' AS model_name] [, 'heading' AS chunk_context])",
                        errors.SqlSyntaxError)
    text = values[0]
    if not isinstance(text, str):
        raise UserError("CALL CHUNKS: the first argument must be the text to cut", errors.SqlSyntaxError)
    settings = {key: str(v) for key, v in zip(POSITIONAL, values[1:])}
    for name, value in stmt.options:
        if name not in CALL_OPTIONS:
            raise UserError(f"CALL CHUNKS: unknown option '{name}'; expected one of {', '.join(CALL_OPTIONS)}",
                            errors.SqlSyntaxError)
        if name in settings:
            raise UserError(f"CALL CHUNKS: {name} is given twice", errors.SqlSyntaxError)
        settings[name] = str(_value(value, params))
    return text, settings


def _checked_spec(db: Any, settings: dict[str, str]) -> vector_columns.VectorSpec:
    """The same rules as CREATE TABLE (docs/vector_columns.md), on a column cut with these settings."""
    options = {"knn_type": "hnsw", "from": "text", "model_name": DEFAULT_MODEL, **settings}
    return validate(db, "CALL CHUNKS", [("text", "text", {}), ("chunks", "float_vector_array", options)])["chunks"]


def call_chunks(db: Any, stmt: ast.CallChunks, params: Any = None) -> Result:
    text, settings = _call_settings(stmt, params)
    check_text(text, "CALL CHUNKS")
    spec = _checked_spec(db, settings)
    listed = preview(embed.spec_model(spec, db.remote_access), text, strategy=spec.chunk_strategy,
                     max_tokens=spec.max_tokens, overlap_tokens=spec.overlap_tokens, max_chunks=spec.max_chunks,
                     chunk_context=spec.chunk_context)
    rows = [_row(v) + (v.embedded,) for v in listed]
    return Result(columns=list(CHUNK_COLUMNS) + [EMBEDDED_COLUMN], rows=rows, rowcount=len(rows))
