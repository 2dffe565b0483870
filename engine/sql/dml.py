"""INSERT / REPLACE / UPDATE / DELETE. SQLite does the relational work; this module adds ids,
vector checks, embedding of model-backed columns and the chunk rows that index them."""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlglot import exp

from tesseradb.grammar import ast
from tesseradb.storage.catalog import quote
from tesseradb.storage.chunks import delete_doc_chunks, write_chunks

from tesseradb import errors
from tesseradb.embed.rows import Embedded, embed_texts, source_text
from tesseradb.errors import UserError
from tesseradb.catalog.tables import Column, Table
from tesseradb.catalog.types import VECTOR_TYPES, pack_array, pack_vector, write_value
from tesseradb.catalog.values import bind, bind_many, evaluate_row, to_vectors

if TYPE_CHECKING:
    from tesseradb.sql.database import Database, Result


def _result(**kw):
    from tesseradb.sql.database import Result
    return Result(**kw)


# -- INSERT / REPLACE ---------------------------------------------------------------------------
def _target(db: "Database", expr: exp.Insert) -> tuple[Table, list[Column]]:
    target = expr.this
    names = None
    if isinstance(target, exp.Schema):
        names = [i.name for i in target.expressions]
        target = target.this
    table = db.table(target.name)
    if names is None:
        return table, list(table.columns)
    columns = []
    for name in names:
        col = table.column(name)
        if col is None:
            raise UserError(f"Unknown column '{name}' in 'field list'", errors.NoSuchColumn)
        if col in columns:
            raise UserError(f"Column '{name}' specified twice", errors.ProgrammingError)
        columns.append(col)
    return table, columns


def _rows_of(db: "Database", expr: exp.Insert, bound: dict[str, Any]) -> list[list[Any]]:
    source = expr.expression
    if isinstance(source, exp.Values):
        return [evaluate_row(db, tup.expressions if isinstance(tup, exp.Tuple) else [tup], bound)
                for tup in source.expressions]
    from tesseradb.sql.query import _fill_knn, plan_select      # INSERT ... SELECT may use knn() and LENGTH(v)
    planned = plan_select(db, source, bound)
    if planned.knn is not None:
        _fill_knn(db, planned.knn)
    return [list(r) for r in db.store.execute(planned.sql, planned.bound)]


def insert(db: "Database", stmt: ast.Query, params=None) -> "Result":
    return insert_many(db, stmt, [params])


def insert_many(db: "Database", stmt: ast.Query, param_sets: Sequence[Any]) -> "Result":
    """INSERT or REPLACE once per parameter set, as one batch (embedding batched across rows)."""
    expr: exp.Insert = stmt.expr
    for unsupported in ("conflict", "ignore", "overwrite"):
        if expr.args.get(unsupported):
            raise UserError(f"INSERT with {unsupported.upper()} is not supported; use REPLACE",
                            errors.NotSupportedError)
    table, columns = _target(db, expr)
    rows: list[list[Any]] = []
    for bound_expr, bound in bind_many(expr, param_sets):
        rows.extend(_rows_of(db, bound_expr, bound))
    return write_rows(db, table, columns, rows, replace=stmt.replace)


def _check_width(rows: list[list[Any]], width: int) -> None:
    for n, row in enumerate(rows, start=1):
        if len(row) != width:
            raise UserError(f"Column count doesn't match value count at row {n}", errors.ProgrammingError)


def _id_value(value: Any, row: int) -> int | None:
    if value is None or (isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value == 0):
        return None
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return _id_value(int(value), row)
    raise UserError(f"Incorrect integer value: '{value}' for column 'id' at row {row}", errors.DataError)


def _assign_ids(db: "Database", table: Table, given: list[int | None], replace: bool) -> list[int]:
    explicit = [i for i in given if i is not None]
    if not replace:
        seen: set[int] = set()
        for i in explicit:
            if i in seen:
                raise UserError(f"duplicate id '{i}'", errors.DuplicateKey)
            seen.add(i)
        for start in range(0, len(explicit), 500):
            part = explicit[start:start + 500]
            hit = db.store.one(f"SELECT id FROM {quote(table.name)} WHERE id IN ({','.join('?' * len(part))}) "
                               "LIMIT 1", part)
            if hit:
                raise UserError(f"duplicate id '{hit[0]}'", errors.DuplicateKey)
    top = db.store.one(f"SELECT COALESCE(MAX(id), 0) FROM {quote(table.name)}")[0]
    next_id = max([top, *explicit]) + 1
    ids = []
    for i in given:
        if i is None:
            i, next_id = next_id, next_id + 1
        ids.append(i)
    return ids


def write_rows(db: "Database", table: Table, columns: list[Column], rows: list[list[Any]],
               replace: bool = False) -> "Result":
    """Insert (or replace) rows of Python values into ``table``: the one write path shared by
    INSERT, REPLACE, executemany and LOAD DATA."""
    _check_width(rows, len(columns))
    if not rows:
        return _result(rowcount=0)
    names = [c.name.lower() for c in columns]
    records = [dict(zip(names, row)) for row in rows]
    given = [_id_value(r.get("id"), n) for n, r in enumerate(records, start=1)]
    ids = _assign_ids(db, table, given, replace)
    if replace:
        ids, records = _last_of_each(ids, records)
    for doc_id, rec in zip(ids, records):
        rec["id"] = doc_id
    vectors = _vector_values(db, table, names, records, ids)
    scalar_cols = [c for c in table.columns if c.type not in VECTOR_TYPES and
                   (c.name.lower() in names or c.name.lower() == "id")]
    vector_cols = [c for c in table.columns if c.type in VECTOR_TYPES and c.name.lower() in vectors]
    out_cols = scalar_cols + vector_cols
    values = []
    for n, rec in enumerate(records):
        row = [write_value(c.type, rec.get(c.name.lower())) for c in scalar_cols]
        row += [_pack(c, vectors[c.name.lower()][n]) for c in vector_cols]
        values.append(row)
    deleted = 0
    if replace:
        deleted = _delete_ids(db, table, ids)
    col_sql = ", ".join(quote(c.name) for c in out_cols)
    db.store.executemany(f"INSERT INTO {quote(table.name)} ({col_sql}) VALUES ({', '.join('?' * len(out_cols))})",
                         values)
    _write_chunk_rows(db, table, ids, vectors)
    return _result(rowcount=len(ids) + deleted, lastrowid=ids[-1])


def _last_of_each(ids: list[int], records: list[dict]) -> tuple[list[int], list[dict]]:
    last = {doc_id: n for n, doc_id in enumerate(ids)}
    keep = sorted(last.values())
    return [ids[n] for n in keep], [records[n] for n in keep]


def _delete_ids(db: "Database", table: Table, ids: list[int]) -> int:
    db.store.execute(f"DELETE FROM {quote(table.name)} WHERE id IN (SELECT value FROM json_each(?))",
                     (json.dumps(ids),))
    return db.store.changes()


def _pack(col: Column, value: Embedded | None) -> bytes | None:
    if value is None:
        return None if col.type == "float_vector" else b""
    if col.type == "float_vector":
        return pack_vector(value.vectors[0]) if len(value.vectors) else None
    return pack_array(value.vectors)


def _vector_values(db: "Database", table: Table, names: list[str], records: list[dict],
                   ids: list[int]) -> dict[str, list[Embedded | None]]:
    """For every vector column written by this statement: one Embedded (or None) per row."""
    out: dict[str, list[Embedded | None]] = {}
    for col in table.columns:
        if col.type not in VECTOR_TYPES:
            continue
        key = col.name.lower()
        spec = table.vectors.get(key)
        if key in names:
            out[key] = [_supplied(col, spec, rec.get(key), n) for n, rec in enumerate(records, start=1)]
        elif spec is not None and spec.model_name:
            texts = [source_text(spec, rec) for rec in records]
            labels = [f"row {n} (id {doc_id})" for n, doc_id in enumerate(ids, start=1)]
            out[key] = list(embed_texts(db, spec, texts, labels))
        else:
            out[key] = [None] * len(records)
    return out


def _supplied(col: Column, spec, value: Any, row: int) -> Embedded | None:
    if isinstance(value, (bytes, bytearray, memoryview)):   # INSERT ... SELECT of a vector column
        import struct

        from tesseradb.catalog.types import unpack
        try:
            value = unpack(bytes(value), col.type == "float_vector_array").tolist() if value else []
        except (ValueError, struct.error):      # a BLOB that is not a stored vector
            raise UserError(f"row {row}, column '{col.name}': incompatible value specified for a float "
                            "vector column (a BLOB that is not a vector)", errors.DataError) from None
        if col.type == "float_vector" and value:
            value = value[0]
    if value is None:
        return None
    matrix = to_vectors(value, is_array=col.type == "float_vector_array",
                        dims=spec.dims if spec else None,
                        normalize=spec is not None and spec.similarity == "cosine",
                        row=row, column=col.name, model=spec.model_name if spec else None)
    return Embedded(matrix, [(None, None)] * len(matrix))


def _write_chunk_rows(db: "Database", table: Table, ids: list[int],
                      vectors: dict[str, list[Embedded | None]]) -> None:
    for key, per_row in vectors.items():
        if key not in table.vectors:
            continue
        layout = table.layout(key)
        rows = [(doc_id, ord_, s, e) for doc_id, emb in zip(ids, per_row) if emb is not None
                for ord_, (s, e) in enumerate(emb.spans)]
        if rows:
            write_chunks(db.store, layout, rows)


# -- UPDATE -------------------------------------------------------------------------------------
def update(db: "Database", stmt: ast.Query, params=None) -> "Result":
    expr, bound = bind(stmt.expr, params)
    table = db.table(expr.this.name)
    sets = {e.this.name.lower(): e for e in expr.expressions if isinstance(e, exp.EQ)}
    for name in sets:
        if table.column(name) is None:
            raise UserError(f"Unknown column '{name}' in 'field list'", errors.NoSuchColumn)
    _no_knn(expr)
    if "id" in sets and table.vectors:     # the chunk rows of the knn columns are keyed by id
        raise UserError("the id of a row with vector columns cannot be updated; use REPLACE")
    _convert_sets(table, sets, bound)
    vector_sets = {n: e for n, e in sets.items() if table.is_vector(n)}
    stale = [s for s in table.model_columns() if s.column.lower() not in vector_sets
             and any(f.lower() in sets for f in s.from_columns)]
    if not vector_sets and not stale:
        db.store.execute(_limit_through_ids(expr).sql(dialect="sqlite"), bound)
        return _result(rowcount=db.store.changes())
    ids = _matching_ids(db, table, expr, bound)
    scalar = expr.copy()
    scalar.set("expressions", [e for e in scalar.expressions
                               if not (isinstance(e, exp.EQ) and e.this.name.lower() in vector_sets)])
    scalar.set("where", exp.Where(this=exp.condition("id IN (SELECT value FROM json_each(:_tessera_ids))")))
    scalar.set("order", None)
    scalar.set("limit", None)
    if scalar.expressions:
        db.store.execute(scalar.sql(dialect="sqlite"), {**bound, "_tessera_ids": json.dumps(ids)})
    for name, eq in vector_sets.items():
        value = evaluate_row(db, [eq.expression], bound)[0]
        col = table.column(name)
        per_row = [_supplied(col, table.vectors.get(name), value, n) for n in range(1, len(ids) + 1)]
        _store_vectors(db, table, col, ids, per_row)
    if stale:
        recompute(db, table, stale, ids)
    return _result(rowcount=len(ids))


def _limit_through_ids(expr: exp.Expression) -> exp.Expression:
    """MySQL's ``UPDATE/DELETE ... ORDER BY ... LIMIT n`` (SQLite is built without it): the rows are
    picked first, by id, then changed."""
    if not isinstance(expr.this, exp.Table) or (expr.args.get("order") is None and expr.args.get("limit") is None):
        return expr
    expr = expr.copy()
    pick = exp.select("id").from_(expr.this.copy())
    for arg in ("where", "order", "limit"):
        if expr.args.get(arg) is not None:
            pick.set(arg, expr.args[arg].copy())
        expr.set(arg, None)
    expr.set("where", exp.Where(this=exp.column("id").isin(query=pick)))
    return expr


def _no_knn(expr: exp.Expression) -> None:
    if any(str(n.this).lower() in ("knn", "knn_dist") for n in expr.find_all(exp.Anonymous)):
        raise UserError("knn() and knn_dist() can only be used in a SELECT")


def _convert_sets(table: Table, sets: dict[str, exp.EQ], bound: dict[str, Any]) -> None:
    """``SET col = value`` converts values as INSERT does: a bound dict/list into a json column, a
    date string or NOW() into a timestamp, numpy scalars into Python numbers."""
    for name, eq in sets.items():
        col = table.column(name)
        if col.type in VECTOR_TYPES:
            continue
        value = eq.expression
        if isinstance(value, exp.Placeholder):
            bound[str(value.this)] = write_value(col.type, bound[str(value.this)])
        elif col.type == "timestamp":
            value.replace(exp.Anonymous(this="_tessera_timestamp", expressions=[value.copy()]))


def _matching_ids(db: "Database", table: Table, expr: exp.Expression, bound: dict[str, Any]) -> list[int]:
    select = exp.select("id").from_(expr.this.copy())
    for arg in ("where", "order", "limit"):
        if expr.args.get(arg) is not None:
            select.set(arg, expr.args[arg].copy())
    return [r[0] for r in db.store.execute(select.sql(dialect="sqlite"), bound)]


def _store_vectors(db: "Database", table: Table, col: Column, ids: list[int],
                   per_row: list[Embedded | None]) -> None:
    db.store.executemany(f"UPDATE {quote(table.name)} SET {quote(col.name)} = ? WHERE id = ?",
                         [(_pack(col, emb), doc_id) for doc_id, emb in zip(ids, per_row)])
    if col.name.lower() in table.vectors:
        layout = table.layout(col.name)
        delete_doc_chunks(db.store, layout, ids)
        _write_chunk_rows(db, table, ids, {col.name.lower(): per_row})


def recompute(db: "Database", table: Table, specs: list, ids: list[int]) -> None:
    """Embed the model columns ``specs`` again for the rows ``ids`` from their ``from`` columns."""
    if not ids:
        return
    sources = sorted({f for s in specs for f in s.from_columns}, key=str.lower)
    cols = ", ".join(quote(table.column(f).name) for f in sources)
    for start in range(0, len(ids), 2000):
        part = ids[start:start + 2000]
        rows = list(db.store.execute(f"SELECT id, {cols} FROM {quote(table.name)} WHERE id IN "
                                     "(SELECT value FROM json_each(?)) ORDER BY id", (json.dumps(part),)))
        got_ids = [r[0] for r in rows]
        records = [dict(zip([f.lower() for f in sources], r[1:])) for r in rows]
        for spec in specs:
            texts = [source_text(spec, rec) for rec in records]
            labels = [f"id {doc_id}" for doc_id in got_ids]
            _store_vectors(db, table, table.column(spec.column), got_ids, embed_texts(db, spec, texts, labels))


def recompute_all(db: "Database", table: Table, specs: list) -> None:
    ids = [r[0] for r in db.store.execute(f"SELECT id FROM {quote(table.name)} ORDER BY id")]
    recompute(db, table, specs, ids)


# -- DELETE -------------------------------------------------------------------------------------
def delete(db: "Database", stmt: ast.Query, params=None) -> "Result":
    expr, bound = bind(stmt.expr, params)
    db.table(expr.this.name if isinstance(expr.this, exp.Table) else expr.find(exp.Table).name)
    _no_knn(expr)
    db.store.execute(_limit_through_ids(expr).sql(dialect="sqlite"), bound)
    return _result(rowcount=db.store.changes())
