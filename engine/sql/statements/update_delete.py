"""UPDATE and DELETE statements (INSERT and REPLACE: ``tesseradb.sql.statements.insert``). SQLite does
the relational work; vectors and chunk rows are written through the one write path
(``tesseradb.sql.write``)."""
from __future__ import annotations

import json
from typing import Any

import apsw
from sqlglot import exp

from tesseradb import errors
from tesseradb.catalog import sql_functions
from tesseradb.catalog.tables import Table
from tesseradb.catalog.types import VECTOR_TYPES, write_value
from tesseradb.catalog.values import bind, evaluate_row
from tesseradb.errors import UserError
from tesseradb.grammar import ast
from tesseradb.results import Result
from tesseradb.sql.database import Database
from tesseradb.sql.mysql import keys
from tesseradb.sql.search import passage_calls
from tesseradb.sql.search import match
from tesseradb.sql.write import recompute, store_vectors, supplied_vectors


KNN_CALLS = sql_functions.names("knn")      # knn(), knn_dist(): only in a SELECT


# -- UPDATE -------------------------------------------------------------------------------------
def update(db: Database, stmt: ast.Query, params=None) -> Result:
    expr, bound = bind(stmt.expr, params)
    table = db.table(expr.this.name)
    sets = {e.this.name.lower(): e for e in expr.expressions if isinstance(e, exp.EQ)}
    for name in sets:
        if table.column(name) is None:
            raise errors.unknown_column(name)
    _no_knn(expr)
    expr = match.write_filter(db, table, expr, bound)          # WHERE MATCH('q')
    if "id" in sets and table.vectors:     # the chunk rows of the knn columns are keyed by id
        raise UserError("the id of a row with vector columns cannot be updated; use REPLACE", errors.SqlSyntaxError)
    _convert_sets(table, sets, bound)
    try:
        return _apply(db, table, expr, sets, bound)
    except apsw.ConstraintError as exc:                        # a unique key repeated: MySQL's 1062
        raise keys.update_duplicate(db, table, expr, bound, exc) from None


def _apply(db: Database, table: Table, expr: exp.Update, sets: dict[str, exp.EQ], bound: dict[str, Any]) -> Result:
    vector_sets = {n: e for n, e in sets.items() if table.is_vector(n)}
    stale = [s for s in table.model_columns() if s.column.lower() not in vector_sets
             and any(f.lower() in sets for f in s.from_columns)]
    if not vector_sets and not stale:
        db.store.execute(_limit_through_ids(expr).sql(dialect="sqlite"), bound)
        return Result(rowcount=db.store.changes())
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
        value = evaluate_row(db.store, [eq.expression], bound)[0]
        col = table.column(name)
        per_row = [supplied_vectors(col, table.vectors.get(name), value, n) for n in range(1, len(ids) + 1)]
        store_vectors(db, table, col, ids, per_row)
    if stale:
        recompute(db, table, stale, ids)
    return Result(rowcount=len(ids))


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
    if any(str(n.this).lower() in KNN_CALLS for n in expr.find_all(exp.Anonymous)):
        raise UserError("knn() and knn_dist() can only be used in a SELECT", errors.SqlSyntaxError)
    passage_calls.reject_outside_knn(expr)


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


def _matching_ids(db: Database, table: Table, expr: exp.Expression, bound: dict[str, Any]) -> list[int]:
    select = exp.select("id").from_(expr.this.copy())
    for arg in ("where", "order", "limit"):
        if expr.args.get(arg) is not None:
            select.set(arg, expr.args[arg].copy())
    return [r[0] for r in db.store.execute(select.sql(dialect="sqlite"), bound)]


# -- DELETE -------------------------------------------------------------------------------------
def delete(db: Database, stmt: ast.Query, params=None) -> Result:
    expr, bound = bind(stmt.expr, params)
    table = db.table(expr.this.name if isinstance(expr.this, exp.Table) else expr.find(exp.Table).name)
    _no_knn(expr)
    expr = match.write_filter(db, table, expr, bound)          # WHERE MATCH('q')
    db.store.execute(_limit_through_ids(expr).sql(dialect="sqlite"), bound)
    return Result(rowcount=db.store.changes())


def delete_ids(db: Database, table: Table, ids: list[int]) -> int:
    """Delete rows by id through DELETE (chunks, full-text and vectors go with them): REPLACE's victims."""
    where = exp.In(this=exp.column("id"), expressions=[exp.Literal.number(i) for i in ids])
    stmt = ast.Query(expr=exp.delete(exp.to_table(table.name, quoted=True), where=where), kind="delete")
    return delete(db, stmt).rowcount
