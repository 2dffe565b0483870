"""CREATE TABLE t [AS] SELECT ... and CREATE TABLE t LIKE u (MySQL's, issue 22).

- ``AS SELECT``: the new table's columns are the SELECT's result columns, named as the result names
  them and typed from what SQLite declares for them (a plain column keeps its table's type; an
  expression is typed from its values: integers ``bigint``, numbers ``double``, else ``text``); the rows
  are written through the one write path, so vectors keep their values. Keys, defaults and vector
  options are not copied (MySQL copies no keys either).
- ``LIKE``: the source's columns with their declared types, NOT NULL / DEFAULT / CHECK / COMMENT, its
  declared integer key and every vector column option (a model-backed column embeds again on its
  inserts); no rows. Secondary indexes and UNIQUE keys declared at table level are not copied.
"""
from __future__ import annotations

from typing import Any

from tesseradb.grammar import ast
from tesseradb.results import Result
from tesseradb.sql import passes
from tesseradb.sql.database import Database
from tesseradb.sql.mysql import auto_value, row_id
from tesseradb.sql.statements import ddl, query
from tesseradb.sql.write import write_rows

# SQLite's declared type of a result column -> (canonical type, MySQL spelling)
DECLARED: dict[str, tuple[str, str]] = {
    "INTEGER": ("int", "int"), "BIGINT": ("bigint", "bigint"), "FLOAT": ("float", "double"),
    "TEXT": ("text", "text"), "STRING_TEXT": ("string", "varchar(255)"), "BOOL_INT": ("bool", "bool"),
    "JSON_TEXT": ("json", "json"), "TIMESTAMP_INT": ("timestamp", "timestamp"),
    "DATE_TEXT": ("date", "date"), "DATETIME_TEXT": ("datetime", "datetime"), "TIME_TEXT": ("time", "time"),
    "FLOAT_VECTOR_BLOB": ("float_vector", "float_vector"),
    "FLOAT_VECTOR_ARRAY_BLOB": ("float_vector_array", "float_vector_array"),
}


def _from_values(values: list[Any]) -> tuple[str, str]:
    kinds = {type(v) for v in values if v is not None}
    if kinds and kinds <= {int}:
        return "bigint", "bigint"
    if kinds and kinds <= {int, float}:
        return "float", "double"
    return "text", "text"


def _columns(result: Result) -> list[ast.ColumnDef]:
    defs, seen = [], set()
    for n, (name, decl) in enumerate(result.columns):
        if str(name).lower() in seen or str(name).lower() == "id":
            continue
        seen.add(str(name).lower())
        kind, text = DECLARED.get((decl or "").upper()) or _from_values([r[n] for r in result.rows])
        defs.append(ast.ColumnDef(str(name), kind, text))
    return defs


def create_table_as(db: Database, stmt: ast.CreateTableAs, params: Any = None) -> Result:
    if stmt.table.lower() in db.tables and stmt.if_not_exists:
        return Result(rowcount=0)
    result = query.select(db, passes.prepare(db, stmt.query, params), params)
    defs = _columns(result)
    ddl.create_table(db, ast.CreateTable(table=stmt.table, columns=tuple(defs)))
    table = db.table(stmt.table)
    names = [d.name.lower() for d in defs]
    index = {str(name).lower(): n for n, (name, _) in reversed(list(enumerate(result.columns)))}
    rows = [[row[index[name]] for name in names] for row in result.rows]
    if not rows:
        return Result(rowcount=0)
    written = write_rows(db, table, [table.column(n) for n in names], rows,
                         id_rule=auto_value.id_rule(db, table))
    return Result(rowcount=written.rowcount)


def _key_def(source: Any) -> ast.ColumnDef | None:
    name = row_id.alias(source)
    if name is None:
        return None
    id_col = source.columns[0]
    kept = tuple((k, v) for k, v in id_col.constraints if k in ("auto_increment", "comment"))
    return ast.ColumnDef(name, "int", row_id.display_type(source, id_col), (), (("primary_key", None),) + kept)


def create_table_like(db: Database, stmt: ast.CreateTableLike, params: Any = None) -> Result:
    source = db.table(stmt.source)
    key = _key_def(source)
    defs = ([key] if key is not None else []) + [
        ast.ColumnDef(c.name, c.type, c.type_text, c.options, c.constraints) for c in source.columns[1:]]
    options = tuple((k, v) for k, v in source.options.items() if k != "comment")
    return ddl.create_table(db, ast.CreateTable(table=stmt.table, columns=tuple(defs), options=options,
                                                if_not_exists=stmt.if_not_exists))
