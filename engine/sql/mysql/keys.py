"""MySQL's rules for INSERT and REPLACE: they *decide*, the INSERT handler acts
(tesseradb.sql.statements.insert; docs/compatibility.md#mysql):

- ``INSERT INTO t VALUES (...)`` without a column list: as many values as declared columns fill them
  (the id is assigned); one more is Manticore's form, id first.
- An omitted NOT NULL column without a DEFAULT is ``ERROR 1364 Field 'x' doesn't have a default value``.
- A new row that repeats a unique key is ``ERROR 1062 Duplicate entry 'v' for key 'k'``; REPLACE instead
  deletes every row that conflicts with it on any unique key (MySQL), then inserts.
- ``INSERT IGNORE`` skips a row that repeats the id or a unique key, with a Warning 1062;
  ``ON DUPLICATE KEY UPDATE`` turns it into an UPDATE of the row it collides with (``VALUES(col)`` is
  the value the row would have inserted). Rows are taken in order, against the table as the earlier
  rows left it; rows affected count as MySQL counts them: 1 per inserted row, 2 per updated row.
"""
from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import Any

import apsw
from sqlglot import exp

from tesseradb import errors
from tesseradb.catalog.tables import Table
from tesseradb.catalog.types import write_value
from tesseradb.errors import UserError
from tesseradb.grammar import ast
from tesseradb.sql.mysql import auto_value, row_id, schema_info
from tesseradb.sql.database import Database
from tesseradb.sql.write import explicit_id
from tesseradb.storage.catalog import quote


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


def listed(table: Table, expr: exp.Insert) -> list[str]:
    if isinstance(expr.this, exp.Schema):
        return [i.name for i in expr.this.expressions]
    return [c.name for c in table.columns]


# -- 1364 ----------------------------------------------------------------------------------------------
def check_defaults(db: Database, table: Table, listed: list[str]) -> None:
    given = {n.lower() for n in listed}
    key = row_id.alias(table)
    if key is not None and not row_id.auto_increment(table) and "id" not in given:
        raise UserError(f"Field '{key}' doesn't have a default value", errors.NoDefaultValue)
    for name in schema_info.schema(db, table).required:
        if name.lower() not in given:
            raise UserError(f"Field '{name}' doesn't have a default value", errors.NoDefaultValue)


# -- duplicate keys --------------------------------------------------------------------------------------
def _entry(values: tuple) -> str:
    return "-".join(str(v) for v in values)


def _key_values(key: schema_info.UniqueKey, record: dict[str, Any], types: dict[str, str]) -> tuple | None:
    """The row's values on ``key`` as stored, or None when the row leaves one out or has a NULL in it
    (NULLs never conflict)."""
    if any(c.lower() not in record for c in key.columns):
        return None
    values = tuple(write_value(types.get(c.lower(), ""), record[c.lower()]) for c in key.columns)
    return None if None in values else values


def _holders(db: Database, table: Table, key: schema_info.UniqueKey, values: tuple, limit: str = "") -> list[int]:
    where = " AND ".join(f"{quote(c)} = ?" for c in key.columns)
    return [r[0] for r in db.store.execute(f"SELECT id FROM {quote(table.name)} WHERE {where}{limit}", values)]


def conflicts(db: Database, table: Table, listed: list[str], rows: list[list[Any]], replace: bool) -> list[int]:
    """Check the new rows against every unique key: 1062 for INSERT, the ids to delete for REPLACE."""
    keys = schema_info.schema(db, table).keys
    if not keys or not rows:
        return []
    listed = [n.lower() for n in listed]
    types = {c.name.lower(): c.type for c in table.columns}
    doomed: list[int] = []
    for key in keys:
        seen: set[tuple] = set()
        for row in rows:
            record = dict(zip(listed, row))
            values = _key_values(key, record, types)
            if values is None:
                continue
            if values in seen and not replace:
                raise errors.duplicate_entry(_entry(values), key.name)
            seen.add(values)
            own = record.get("id")
            hits = [h for h in _holders(db, table, key, values) if h != own]
            if hits and not replace:
                raise errors.duplicate_entry(_entry(values), key.name)
            doomed.extend(hits)
    return sorted(set(doomed))


def replaced_within(db: Database, table: Table, listed: list[str], rows: list[list[Any]],
                    zero_generates: bool = True) -> set[int]:
    """REPLACE: the rows of a batch that a later row of the same batch replaces (it repeats their id or
    one of their unique keys; MySQL inserts such a row, then deletes it)."""
    listed = [n.lower() for n in listed]
    types = {c.name.lower(): c.type for c in table.columns}
    keys = schema_info.schema(db, table).keys
    seen: set[tuple] = set()
    replaced: set[int] = set()
    for n in range(len(rows) - 1, -1, -1):          # from the last row: a row is replaced by any later one
        record = dict(zip(listed, rows[n]))
        doc_id = explicit_id(record.get("id"), zero_generates)
        mine = [("id", doc_id)] if doc_id is not None else []
        mine += [(key.name, values) for key in keys if (values := _key_values(key, record, types)) is not None]
        if any(m in seen for m in mine):
            replaced.add(n)
        seen.update(mine)
    return replaced


# -- INSERT IGNORE / ON DUPLICATE KEY UPDATE ---------------------------------------------------------------
def one_at_a_time(expr: exp.Insert) -> bool:
    """IGNORE or ON DUPLICATE KEY UPDATE: each row is decided against the table the rows before it left."""
    conflict = expr.args.get("conflict")
    return bool(expr.args.get("ignore")) or bool(conflict is not None and conflict.args.get("duplicate"))


@dataclasses.dataclass(frozen=True)
class Collision:
    id: int          # the existing row's id
    value: str       # as MySQL shows it in the 1062 text
    key: str         # the key's name (PRIMARY for the id)

    def warning(self) -> str:
        return f"Duplicate entry '{self.value}' for key '{self.key}'"


def collision(db: Database, table: Table, record: dict[str, Any]) -> Collision | None:
    """The first existing row this record collides with, on the id or on any unique key."""
    doc_id = record.get("id")
    kept = isinstance(doc_id, int) and (doc_id != 0 or not auto_value.zero_generates(db, table))
    if kept and db.store.one(
            f"SELECT 1 FROM {quote(table.name)} WHERE id = ?", (doc_id,)):
        return Collision(doc_id, str(doc_id), "PRIMARY")
    types = {c.name.lower(): c.type for c in table.columns}
    for key in schema_info.schema(db, table).keys:
        values = _key_values(key, record, types)
        hits = _holders(db, table, key, values, " LIMIT 1") if values is not None else []
        if hits:
            return Collision(hits[0], _entry(values), key.name)
    return None


def update_for(table: Table, conflict: exp.OnConflict, record: dict[str, Any], doc_id: int) -> ast.Query:
    """ON DUPLICATE KEY UPDATE as the UPDATE of the row ``doc_id``, ``VALUES(col)`` replaced by the value
    the row would have inserted."""
    def new_value(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Anonymous) and str(node.this).upper() == "VALUES" and len(node.expressions) == 1:
            value = record.get(node.expressions[0].name.lower())
            return exp.null() if value is None else exp.Literal.number(value) if isinstance(value, (int, float)) \
                and not isinstance(value, bool) else exp.Literal.string(str(value))
        return node
    assignments = [a.copy().transform(new_value) for a in conflict.expressions]
    where = exp.EQ(this=exp.column("id"), expression=exp.Literal.number(doc_id))
    update = exp.Update(this=exp.to_table(table.name, quoted=True), expressions=assignments,
                        where=exp.Where(this=where))
    return ast.Query(expr=update, kind="update")


# -- the write path's errors in MySQL's words ------------------------------------------------------------
@contextlib.contextmanager
def mysql_errors(db: Database, table: Table) -> Iterator[None]:
    """The write path's duplicate errors in MySQL's words (the key's name; PRIMARY for a declared key)."""
    try:
        yield
    except apsw.ConstraintError as exc:
        raise duplicate_error(db, table, exc) from None


def duplicate_error(db: Database, table: Table, exc: apsw.ConstraintError) -> BaseException:
    """SQLite's ``UNIQUE constraint failed: t.a, t.b`` as MySQL's 1062 naming the key (the value is
    not known here: the statements check their rows first, so this is the last resort)."""
    key = _failed_key(db, table, exc)
    return exc if key is None else UserError(f"Duplicate entry for key '{key.name}'", errors.DuplicateKey)


def _failed_key(db: Database, table: Table, exc: apsw.ConstraintError) -> schema_info.UniqueKey | None:
    failed = errors.unique_columns(exc)
    if failed is None:
        return None
    if failed == ("id",) and row_id.alias(table):      # a declared key (`pk int PRIMARY KEY`) is the row id
        return schema_info.UniqueKey("PRIMARY", ("id",))
    for key in schema_info.unique_keys(db, table):
        if tuple(c.lower() for c in key.columns) == failed:
            return key
    return None


def update_duplicate(db: Database, table: Table, update: exp.Update, bound: dict[str, Any],
                     exc: apsw.ConstraintError) -> BaseException:
    """An UPDATE that SQLite refused on a unique key, as MySQL words it, value included: the first
    new value (in id order) that another row already has, or that two updated rows would share."""
    key = _failed_key(db, table, exc)
    if key is None:
        return exc
    sets = {e.this.name.lower(): e.expression for e in update.expressions if isinstance(e, exp.EQ)}
    new = [sets.get(c.lower(), exp.column(c, quoted=True)).copy() for c in key.columns]
    pick = exp.select("id", *new).from_(update.this.copy())
    for arg in ("where", "order", "limit"):
        if update.args.get(arg) is not None:
            pick.set(arg, update.args[arg].copy())
    rows = list(db.store.execute(pick.sql(dialect="sqlite"), bound))
    changed = {r[0] for r in rows}
    seen: set[tuple] = set()
    for doc_id, *values in sorted(rows, key=lambda r: r[0]):
        values = tuple(values)
        if None in values:
            continue
        if values in seen or any(h not in changed for h in _holders(db, table, key, values)):
            return errors.duplicate_entry(_entry(values), key.name)
        seen.add(values)
    return UserError(f"Duplicate entry for key '{key.name}'", errors.DuplicateKey)
