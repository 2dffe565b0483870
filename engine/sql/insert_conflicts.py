"""``INSERT IGNORE`` and ``INSERT ... ON DUPLICATE KEY UPDATE`` (MySQL), for VALUES lists.

Rows are taken one at a time, in order, against the table as the earlier rows left it: a row that
repeats the id or any unique key is skipped with a Warning 1062 (IGNORE), or turns into an UPDATE of
the row it collides with (ON DUPLICATE KEY UPDATE; ``VALUES(col)`` is the value the row would have
inserted). Rows affected count as MySQL counts them: 1 per inserted row, 2 per updated row.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from sqlglot import exp

from tesseradb import errors
from tesseradb.catalog.tables import Table
from tesseradb.catalog.types import write_value
from tesseradb.catalog.values import bind, evaluate_row
from tesseradb.errors import UserError
from tesseradb.grammar import ast
from tesseradb.results import Result
from tesseradb.sql import dml
from tesseradb.sql.database import Database
from tesseradb.storage.catalog import quote


def wanted(expr: exp.Insert) -> bool:
    conflict = expr.args.get("conflict")
    return bool(expr.args.get("ignore")) or (conflict is not None and conflict.args.get("duplicate"))


def _collision(db: Database, table: Table, record: dict[str, Any], keys: list) -> tuple[int, str, str] | None:
    """(existing id, shown value, key name) of the first row this record collides with."""
    doc_id = record.get("id")
    if isinstance(doc_id, int) and doc_id and db.store.one(
            f"SELECT 1 FROM {quote(table.name)} WHERE id = ?", (doc_id,)):
        return doc_id, str(doc_id), "PRIMARY"
    types = {c.name.lower(): c.type for c in table.columns}
    for key in keys:
        if any(c.lower() not in record for c in key.columns):
            continue
        values = tuple(write_value(types.get(c.lower(), ""), record[c.lower()]) for c in key.columns)
        if None in values:
            continue
        where = " AND ".join(f"{quote(c)} = ?" for c in key.columns)
        hit = db.store.one(f"SELECT id FROM {quote(table.name)} WHERE {where} LIMIT 1", values)
        if hit:
            return hit[0], "-".join(str(v) for v in values), key.name
    return None


def _update_for(table: Table, conflict: exp.OnConflict, record: dict[str, Any], doc_id: int) -> exp.Update:
    def new_value(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Anonymous) and str(node.this).upper() == "VALUES" and len(node.expressions) == 1:
            value = record.get(node.expressions[0].name.lower())
            return exp.null() if value is None else exp.Literal.number(value) if isinstance(value, (int, float)) \
                and not isinstance(value, bool) else exp.Literal.string(str(value))
        return node
    assignments = [a.copy().transform(new_value) for a in conflict.expressions]
    where = exp.EQ(this=exp.column("id"), expression=exp.Literal.number(doc_id))
    return exp.Update(this=exp.to_table(table.name, quoted=True), expressions=assignments,
                      where=exp.Where(this=where))


def run(handler: Any, db: Database, stmt: ast.Query, table: Table, listed: list[str], keys: list,
        params: Any) -> Result:
    expr: exp.Insert = stmt.expr
    if not isinstance(expr.expression, exp.Values):
        raise UserError("INSERT IGNORE and ON DUPLICATE KEY UPDATE take a VALUES list here; "
                        "INSERT ... SELECT is not supported with them", errors.NotSupportedError)
    bound_expr, bound = bind(expr, params)
    conflict = bound_expr.args.get("conflict")
    plain = bound_expr.copy()
    plain.set("ignore", None)
    plain.set("conflict", None)
    names = [n.lower() for n in listed]
    total = Result(rowcount=0)
    for row in bound_expr.expression.expressions:
        cells = row.expressions if isinstance(row, exp.Tuple) else [row]
        record = dict(zip(names, evaluate_row(db.store, cells, bound)))
        hit = _collision(db, table, record, keys)
        if hit is None:
            one = plain.copy()
            one.set("expression", exp.Values(expressions=[row.copy()]))
            result = handler(db, dataclasses.replace(stmt, expr=one), bound)
            total.rowcount += result.rowcount
            total.lastrowid = result.lastrowid
        elif conflict is None:
            db.warn(f"Duplicate entry '{hit[1]}' for key '{hit[2]}'", 1062)
        else:
            update = _update_for(table, conflict, record, hit[0])
            used = {str(p.this) for p in update.find_all(exp.Placeholder)}    # only the UPDATE's own ?s
            changed = dml.update(db, ast.Query(expr=update, kind="update"),
                                 {k: v for k, v in bound.items() if k in used} or None).rowcount
            total.rowcount += 2 if changed else 0
            total.lastrowid = hit[0]
    return total
