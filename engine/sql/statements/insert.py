"""INSERT and REPLACE, for execute and executemany alike: resolve the target and its column list,
evaluate the rows once (an INSERT ... SELECT streams them in batches: insert_select.py), let MySQL's key rules (``tesseradb.sql.mysql.keys``) decide which rows to
replace, skip (with their warning) or turn into updates, then write through the one write path
(``tesseradb.sql.write``), which adds ids, vectors and chunk rows."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlglot import exp

from tesseradb import errors
from tesseradb.catalog.tables import Column, Table
from tesseradb.catalog.values import bind_many, evaluate_row
from tesseradb.errors import UserError
from tesseradb.grammar import ast
from tesseradb.results import Result
from tesseradb.sql.database import Database
from tesseradb.sql.mysql import auto_value, keys
from tesseradb.sql.statements import insert_select
from tesseradb.sql.statements.update_delete import update
from tesseradb.sql.write import write_rows


def insert(db: Database, stmt: ast.Query, params: Any = None) -> Result:
    return insert_many(db, stmt, [params])


def insert_many(db: Database, stmt: ast.Query, param_sets: Sequence[Any]) -> Result:
    """INSERT or REPLACE once per parameter set, as one batch (embedding batched across rows)."""
    expr: exp.Insert = stmt.expr
    if expr.args.get("overwrite"):
        raise UserError("INSERT with OVERWRITE is not supported; use REPLACE", errors.NotSupportedError)
    table = db.table(target_name(expr))               # a missing table says so, with IGNORE too
    expr = keys.with_column_list(table, expr)
    keys.check_defaults(db, table, keys.listed(table, expr))
    columns = columns_of(table, expr)
    if keys.one_at_a_time(expr):
        return _one_at_a_time(db, table, columns, expr, param_sets)
    if not isinstance(expr.expression, exp.Values):     # INSERT ... SELECT: in batches
        return insert_select.stream(db, table, columns, expr, param_sets, stmt.replace)
    rows: list[list[Any]] = []
    for bound_expr, bound in bind_many(expr, param_sets):
        rows.extend(_rows_of(db, bound_expr, bound))
    return insert_select.write_batch(db, table, columns, rows, stmt.replace, auto_value.id_rule(db, table))


def target_name(expr: exp.Insert) -> str:
    return expr.this.this.name if isinstance(expr.this, exp.Schema) else expr.this.name


def columns_of(table: Table, expr: exp.Insert) -> list[Column]:
    if not isinstance(expr.this, exp.Schema):
        return list(table.columns)
    columns = []
    for name in (i.name for i in expr.this.expressions):
        col = table.column(name)
        if col is None:
            raise errors.unknown_column(name)
        if col in columns:
            raise UserError(f"Column '{name}' specified twice", errors.ProgrammingError)
        columns.append(col)
    return columns


def _rows_of(db: Database, expr: exp.Insert, bound: dict[str, Any]) -> list[list[Any]]:
    """The rows of a VALUES list (INSERT ... SELECT streams: insert_select.py)."""
    return [evaluate_row(db.store, tup.expressions if isinstance(tup, exp.Tuple) else [tup], bound)
            for tup in expr.expression.expressions]


def _one_at_a_time(db: Database, table: Table, columns: list[Column], expr: exp.Insert,
                   param_sets: Sequence[Any]) -> Result:
    """INSERT IGNORE / ON DUPLICATE KEY UPDATE: each row is inserted, skipped with its Warning 1062, or
    turned into the UPDATE of the row it collides with, as keys.collision decides."""
    if not isinstance(expr.expression, exp.Values):
        raise UserError("INSERT IGNORE and ON DUPLICATE KEY UPDATE take a VALUES list here; "
                        "INSERT ... SELECT is not supported with them", errors.NotSupportedError)
    names = [c.name.lower() for c in columns]
    total = Result(rowcount=0)
    for bound_expr, bound in bind_many(expr, param_sets):
        conflict = bound_expr.args.get("conflict")
        for row in _rows_of(db, bound_expr, bound):
            record = dict(zip(names, row))
            hit = keys.collision(db, table, record)
            if hit is None:
                with keys.mysql_errors(db, table):
                    result = write_rows(db, table, columns, [row], id_rule=auto_value.id_rule(db, table))
                total.rowcount += result.rowcount
                total.lastrowid = result.lastrowid
            elif conflict is None:
                db.warn(hit.warning(), 1062)
            else:
                upsert = keys.update_for(table, conflict, record, hit.id)
                used = {str(p.this) for p in upsert.expr.find_all(exp.Placeholder)}   # only its own ?s
                changed = update(db, upsert, {k: v for k, v in (bound or {}).items() if k in used} or None).rowcount
                total.rowcount += 2 if changed else 0
                total.lastrowid = hit.id
    return total
