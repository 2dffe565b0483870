"""MySQL's rules for INSERT and REPLACE, before the write path runs (docs/compatibility.md#mysql):

- ``INSERT INTO t VALUES (...)`` without a column list: as many values as declared columns fill them
  (the id is assigned); one more is Manticore's form, id first.
- An omitted NOT NULL column without a DEFAULT is ``ERROR 1364 Field 'x' doesn't have a default value``.
- A new row that repeats a unique key is ``ERROR 1062 Duplicate entry 'v' for key 'k'``; REPLACE instead
  deletes every row that conflicts with it on any unique key (MySQL), then inserts.
"""
from __future__ import annotations

import contextlib
import dataclasses
import weakref
from collections.abc import Iterator
from typing import Any

import apsw
from sqlglot import exp

from tesseradb import errors
from tesseradb.catalog.tables import Table
from tesseradb.catalog.types import write_value
from tesseradb.catalog.values import bind, evaluate_row
from tesseradb.errors import UserError
from tesseradb.grammar import ast
from tesseradb.results import Result
from tesseradb.sql import constraints, dml, insert_conflicts, row_id
from tesseradb.sql.database import Database
from tesseradb.storage.catalog import quote


@dataclasses.dataclass(frozen=True)
class UniqueKey:
    name: str                  # the MySQL key name
    columns: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Schema:
    """What INSERT checks need of a table's SQLite schema, read once per schema version."""
    keys: tuple[UniqueKey, ...]
    required: tuple[str, ...]      # NOT NULL columns without a default (not the id)


_SCHEMAS: "weakref.WeakKeyDictionary[Database, dict[tuple[str, int], Schema]]" = weakref.WeakKeyDictionary()


def schema(db: Database, table: Table) -> Schema:
    version = int(db.store.one("PRAGMA schema_version")[0])
    cache = _SCHEMAS.setdefault(db, {})
    key = (table.name.lower(), version)
    if key not in cache:
        if len(cache) > 256:
            cache.clear()
        required = tuple(str(name) for _, name, _, notnull, default, pk in
                         db.store.execute(f"PRAGMA table_info({quote(table.name)})")
                         if notnull and default is None and not pk)
        cache[key] = Schema(tuple(unique_keys(db, table)), required)
    return cache[key]


def unique_keys(db: Database, table: Table) -> list[UniqueKey]:
    keys = []
    for _, index, unique, origin, _ in db.store.execute(f"PRAGMA index_list({quote(table.name)})"):
        if not unique or origin == "pk" or str(index).startswith("_tessera"):
            continue
        cols = tuple(str(r[2]) for r in db.store.execute(f"PRAGMA index_info({quote(index)})"))
        if cols and None not in cols:
            keys.append(UniqueKey(constraints.key_name(table.name, str(index)), cols))
    return keys


# -- INSERT without a column list --------------------------------------------------------------------
def _width(source: exp.Expression) -> int | None:
    if isinstance(source, exp.Values):
        widths = {len(t.expressions) if isinstance(t, exp.Tuple) else 1 for t in source.expressions}
        return widths.pop() if len(widths) == 1 else None
    if isinstance(source, exp.Select) and not any(isinstance(p, exp.Star) for p in source.expressions):
        return len(source.expressions)
    return None


def with_column_list(table: Table, expr: exp.Insert) -> exp.Insert:
    """No column list and one value per declared column: name the declared columns (not the id)."""
    if isinstance(expr.this, exp.Schema) or _width(expr.expression) != len(table.columns) - 1:
        return expr
    expr = expr.copy()
    names = [exp.to_identifier(c.name, quoted=True) for c in table.columns[1:]]
    expr.set("this", exp.Schema(this=expr.this, expressions=names))
    return expr


def _listed(table: Table, expr: exp.Insert) -> list[str]:
    if isinstance(expr.this, exp.Schema):
        return [i.name for i in expr.this.expressions]
    return [c.name for c in table.columns]


# -- 1364 ----------------------------------------------------------------------------------------------
def check_defaults(db: Database, table: Table, listed: list[str]) -> None:
    given = {n.lower() for n in listed}
    key = row_id.alias(table)
    if key is not None and not row_id.auto_increment(table) and "id" not in given:
        raise UserError(f"Field '{key}' doesn't have a default value", errors.NoDefaultValue)
    for name in schema(db, table).required:
        if name.lower() not in given:
            raise UserError(f"Field '{name}' doesn't have a default value", errors.NoDefaultValue)


# -- duplicate keys --------------------------------------------------------------------------------------
def _rows(db: Database, expr: exp.Insert, params: Any) -> list[list[Any]] | None:
    if not isinstance(expr.expression, exp.Values):
        return None
    bound_expr, bound = bind(expr, params)
    return [evaluate_row(db.store, t.expressions if isinstance(t, exp.Tuple) else [t], bound)
            for t in bound_expr.expression.expressions]


def _entry(values: tuple) -> str:
    return "-".join(str(v) for v in values)


def conflicts(db: Database, table: Table, expr: exp.Insert, params: Any, replace: bool) -> list[int]:
    """Check the new rows against every unique key: 1062 for INSERT, the ids to delete for REPLACE."""
    keys = schema(db, table).keys
    rows = _rows(db, expr, params) if keys else None
    if not rows:
        return []
    listed = [n.lower() for n in _listed(table, expr)]
    types = {c.name.lower(): c.type for c in table.columns}
    doomed: list[int] = []
    for key in keys:
        seen: set[tuple] = set()
        for row in rows:
            record = dict(zip(listed, row))
            if any(c.lower() not in record for c in key.columns):
                continue
            values = tuple(write_value(types.get(c.lower(), ""), record[c.lower()]) for c in key.columns)
            if None in values:
                continue                                   # NULLs never conflict
            if values in seen and not replace:
                raise UserError(f"Duplicate entry '{_entry(values)}' for key '{key.name}'", errors.DuplicateKey)
            seen.add(values)
            where = " AND ".join(f"{quote(c)} = ?" for c in key.columns)
            hits = [r[0] for r in db.store.execute(f"SELECT id FROM {quote(table.name)} WHERE {where}", values)]
            own = record.get("id")
            hits = [h for h in hits if h != own]
            if hits and not replace:
                raise UserError(f"Duplicate entry '{_entry(values)}' for key '{key.name}'", errors.DuplicateKey)
            doomed.extend(hits)
    return sorted(set(doomed))


def delete_ids(db: Database, table: Table, ids: list[int]) -> int:
    """Delete rows through the engine's DELETE (chunks, full-text and vectors go with them)."""
    where = exp.In(this=exp.column("id"), expressions=[exp.Literal.number(i) for i in ids])
    stmt = ast.Query(expr=exp.delete(exp.to_table(table.name, quoted=True), where=where), kind="delete")
    return dml.delete(db, stmt).rowcount


# -- the whole INSERT / REPLACE -----------------------------------------------------------------------------
def run_insert(handler: Any, db: Database, stmt: ast.Query, params: Any) -> Result:
    expr: exp.Insert = stmt.expr
    name = expr.this.this.name if isinstance(expr.this, exp.Schema) else expr.this.name
    table = db.tables.get(name.lower())
    if table is None:
        return handler(db, stmt, params)               # its own error for a missing table
    expr = with_column_list(table, expr)
    check_defaults(db, table, _listed(table, expr))
    if insert_conflicts.wanted(expr):
        return insert_conflicts.run(handler, db, dataclasses.replace(stmt, expr=expr), table,
                                    _listed(table, expr), list(schema(db, table).keys), params)
    deleted = 0
    doomed = conflicts(db, table, expr, params, stmt.replace)
    if doomed:
        deleted = delete_ids(db, table, doomed)
    with mysql_errors(db, table):
        result = handler(db, dataclasses.replace(stmt, expr=expr), params)
    result.rowcount += deleted
    return result


@contextlib.contextmanager
def mysql_errors(db: Database, table: Table) -> Iterator[None]:
    """The write path's duplicate errors in MySQL's words (the key's name; PRIMARY for a declared key)."""
    try:
        yield
    except apsw.ConstraintError as exc:
        raise duplicate_error(db, table, exc) from None
    except UserError as exc:
        if exc.kind is errors.DuplicateKey and row_id.alias(table) and exc.msg.startswith("duplicate id '"):
            value = exc.msg[len("duplicate id '"):-1]
            raise UserError(f"Duplicate entry '{value}' for key 'PRIMARY'", errors.DuplicateKey) from None
        raise


def duplicate_error(db: Database, table: Table, exc: apsw.ConstraintError) -> BaseException:
    """SQLite's ``UNIQUE constraint failed: t.a, t.b`` as MySQL's 1062 naming the key."""
    text = str(exc)
    if "UNIQUE constraint failed" not in text:
        return exc
    failed = tuple(part.strip().split(".")[-1].lower() for part in text.split(":", 1)[1].split(","))
    for key in unique_keys(db, table):
        if tuple(c.lower() for c in key.columns) == failed:
            return UserError(f"Duplicate entry for key '{key.name}'", errors.DuplicateKey)
    return exc


def run_insert_many(db: Database, stmt: ast.Query, param_sets: list[Any]) -> Result:
    """executemany: key names, defaults and duplicates as in run_insert; the rows stay one batch
    (IGNORE / ON DUPLICATE KEY UPDATE go one parameter set at a time)."""
    expr: exp.Insert = stmt.expr
    name = expr.this.this.name if isinstance(expr.this, exp.Schema) else expr.this.name
    table = db.tables.get(name.lower())
    if table is None:
        return dml.insert_many(db, stmt, param_sets)
    if insert_conflicts.wanted(expr):
        total = Result(rowcount=0)
        for params in param_sets:
            one = run_insert(dml.insert, db, stmt, params)
            total.rowcount += one.rowcount
            total.lastrowid = one.lastrowid or total.lastrowid
        return total
    expr = with_column_list(table, expr)
    check_defaults(db, table, _listed(table, expr))
    with mysql_errors(db, table):
        return dml.insert_many(db, dataclasses.replace(stmt, expr=expr), param_sets)
