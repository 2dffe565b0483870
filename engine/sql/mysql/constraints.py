"""MySQL column constraints and table-level keys in CREATE TABLE, made SQLite's: NOT NULL, DEFAULT and
CHECK go into the column definitions (SQLite enforces them); UNIQUE / PRIMARY KEY / KEY become indexes
named as MySQL names them, so that a duplicate says ``Duplicate entry 'v' for key 'name'``.

MySQL table options (ENGINE=InnoDB, DEFAULT CHARSET, COLLATE, AUTO_INCREMENT, ROW_FORMAT) are accepted
and ignored with a Note; COMMENT is kept. Expressions are MySQL text, translated by sqlglot.
docs/compatibility.md#mysql lists what each clause does.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import sqlglot
from sqlglot.errors import ParseError, TokenError

from tesseradb import errors
from tesseradb.catalog.tables import Column
from tesseradb.catalog.types import VECTOR_TYPES, write_value
from tesseradb.errors import UserError
from tesseradb.grammar import ast
from tesseradb.storage.catalog import quote

INTEGER_TYPES = {"int", "bigint"}
CI_TYPES = {"text", "string"}    # compared, sorted and grouped case-insensitively, as utf8mb4_0900_ai_ci
# MySQL table options: accepted; the value is kept (comment) or ignored with a Note (the rest)
IGNORED_TABLE_OPTIONS = {"charset", "collate", "auto_increment", "row_format", "key_block_size",
                         "stats_persistent", "pack_keys", "checksum", "min_rows", "max_rows"}
MYSQL_ENGINES = {"innodb", "myisam", "aria", "archive", "csv", "ndb", "rocksdb"}   # not MEMORY: Manticore refuses it
IGNORED_COLUMN_CONSTRAINTS = {"collate", "charset", "on_update", "auto_increment", "null"}
KEY_SEPARATOR = "."          # internal index name: "<table>.<key>" (SQLite index names are database-wide)


@dataclass
class Plan:
    checks: list[str] = field(default_factory=list)        # table-level CHECK clauses (SQLite SQL)
    indexes: list[str] = field(default_factory=list)       # CREATE [UNIQUE] INDEX statements
    notes: list[str] = field(default_factory=list)
    comment: str | None = None


# -- expressions -------------------------------------------------------------------------------------
def sqlite_expr(text: str, what: str) -> str:
    """A MySQL expression (DEFAULT, CHECK) as SQLite SQL; a 1064 error when sqlglot cannot read it."""
    try:
        return sqlglot.transpile(text, read="mysql", write="sqlite")[0]
    except (ParseError, TokenError, IndexError):
        raise UserError(f"syntax error in {what} near '{text[:60]}'", errors.SqlSyntaxError) from None


_WORD_DEFAULTS = {"CURRENT_TIMESTAMP": "CURRENT_TIMESTAMP", "NOW()": "CURRENT_TIMESTAMP", "TRUE": "1",
                  "FALSE": "0", "NULL": "NULL", "LOCALTIMESTAMP": "CURRENT_TIMESTAMP"}


NOW_SECONDS = "(CAST(strftime('%s', 'now') AS INTEGER))"     # a timestamp column stores Unix seconds


def default_sql(text: str, col: Column) -> str:
    """DEFAULT <literal | (expr) | CURRENT_TIMESTAMP> as SQLite stores it for this column's type."""
    word = _WORD_DEFAULTS.get(text.upper().replace(" ", ""))
    if word == "CURRENT_TIMESTAMP" and col.type == "timestamp":
        return NOW_SECONDS
    if word is not None:
        return word
    if text.startswith("("):
        return "(" + sqlite_expr(text, f"DEFAULT of column '{col.name}'") + ")"
    if text[0] in "'\"" and col.type == "timestamp":
        seconds = write_value("timestamp", text[1:-1])
        if not isinstance(seconds, int):
            raise UserError(f"Invalid default value for '{col.name}'", errors.ProgrammingError)
        return str(seconds)
    if text[0] in "'\"-+0123456789.":
        return sqlite_expr(text, f"DEFAULT of column '{col.name}'")
    raise UserError(f"Invalid default value for '{col.name}'", errors.ProgrammingError)


def _check_sql(name: str, expr: str) -> str:
    """SQLite reports a failed CHECK by the constraint's name: name it with MySQL's message."""
    message = f"Check constraint '{name}' is violated."
    return f"CONSTRAINT {quote(message)} CHECK ({sqlite_expr(expr, f'CHECK constraint {name!r}')})"


# -- per column -------------------------------------------------------------------------------------
def constraint_map(col: Column) -> dict[str, object]:
    return dict(getattr(col, "constraints", ()) or ())


def column_sql(table: str, col: Column) -> str:
    """NOT NULL / DEFAULT / CHECK for a column's SQLite definition ('' without constraints)."""
    parts = []
    checks = [v for k, v in getattr(col, "constraints", ()) if k == "check"]
    cons = constraint_map(col)
    if "not_null" in cons or "primary_key" in cons:
        parts.append("NOT NULL")
    if "default" in cons:
        parts.append("DEFAULT " + default_sql(str(cons["default"]), col))
    for n, (name, expr) in enumerate(checks, start=1):
        parts.append(_check_sql(name or f"{table}_chk_{col.name}_{n}", expr))
    if col.type in CI_TYPES and not str(cons.get("collate", "")).lower().endswith(("_bin", "binary")):
        parts.append("COLLATE NOCASE")          # MySQL's default collation compares without case
    return (" " + " ".join(parts)) if parts else ""


def added_column(table: str, col: Column, existing: set[str]) -> Plan:
    """ALTER TABLE ... ADD COLUMN with MySQL constraints: the indexes and notes, as in CREATE TABLE."""
    plan = Plan()
    _plan_column(table, col, plan, {key_name(table, n).lower() for n in existing})
    return plan


_TEXT = {"not_null": "NOT NULL", "null": "NULL"}


def column_text(col: Column) -> str:
    """The MySQL constraints of a column as SHOW CREATE TABLE writes them; its keys (UNIQUE, PRIMARY
    KEY) are lines of their own there (statements/show_keys.py), as MySQL prints them."""
    parts = []
    cons = constraint_map(col)
    if "primary_key" in cons and "not_null" not in cons:
        parts.append("NOT NULL")                     # a primary key is NOT NULL (SQLite enforces it too)
    for kind, value in getattr(col, "constraints", ()) or ():
        if kind in _TEXT:
            parts.append(_TEXT[kind])
        elif kind == "default":
            parts.append(f"DEFAULT {value}")
        elif kind == "comment":
            parts.append("COMMENT '" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'")
        elif kind == "check":
            name, expr = value
            parts.append((f"CONSTRAINT `{name}` " if name else "") + f"CHECK {expr}")
    return (" " + " ".join(parts)) if parts else ""


def _index_sql(table: str, key: str, columns: Sequence[str], unique: bool) -> str:
    cols = ", ".join(quote(c) for c in columns)
    kind = "UNIQUE INDEX" if unique else "INDEX"
    return f"CREATE {kind} {quote(table + KEY_SEPARATOR + key)} ON {quote(table)} ({cols})"


def key_name(table: str, index: str) -> str:
    """The MySQL name of an index: constraint keys are stored as "<table>.<key>"."""
    prefix = table + KEY_SEPARATOR
    return index[len(prefix):] if index.lower().startswith(prefix.lower()) else index


# -- the whole table -----------------------------------------------------------------------------------
def plan_table(stmt: ast.CreateTable, columns: list[Column]) -> Plan:
    """Check the MySQL constraints of CREATE TABLE; the SQL that makes them SQLite's."""
    check_primary_keys(stmt)
    plan = Plan()
    by_name = {c.name.lower(): c for c in columns}
    aliased = dict(columns[0].constraints or ()).get("alias") if columns else None
    if aliased:
        by_name[str(aliased).lower()] = columns[0]        # the declared key is the id (row_id.py)
    used: set[str] = set()
    for col in columns[1:]:
        _plan_column(stmt.table, col, plan, used)
    for key in stmt.keys:
        _plan_key(stmt.table, key, by_name, plan, used)
    _plan_options(stmt.options, plan)
    return plan


def _unique_name(base: str, used: set[str]) -> str:
    name, n = base, 2
    while name.lower() in used:
        name, n = f"{base}_{n}", n + 1
    used.add(name.lower())
    return name


def _plan_column(table: str, col: Column, plan: Plan, used: set[str]) -> None:
    cons = constraint_map(col)
    if cons and col.type in VECTOR_TYPES and set(cons) - {"comment", "null"}:
        raise UserError(f"column '{col.name}': constraints other than COMMENT and NULL are not supported on "
                        f"{col.type} columns", errors.NotSupportedError)
    if "auto_increment" in cons:
        raise UserError(f"Incorrect column specifier for column '{col.name}': AUTO_INCREMENT belongs to the "
                        "table's integer PRIMARY KEY, which is its row id", errors.ProgrammingError)
    if "primary_key" in cons:
        plan.notes.append(_primary_note(col))
        plan.indexes.append(_index_sql(table, _unique_name("PRIMARY", used), [col.name], unique=True))
    if "unique" in cons:
        plan.indexes.append(_index_sql(table, _unique_name(col.name, used), [col.name], unique=True))
    binary = str(cons.get("collate", "")).lower().endswith(("_bin", "binary"))
    for kind in sorted(set(cons) & {"on_update", "collate", "charset"}):
        if kind == "collate" and binary:
            continue                                   # kept: the column compares case-sensitively
        plan.notes.append(f"column '{col.name}': {kind.upper().replace('_', ' ')} is accepted and ignored "
                          "(text is UTF-8; text columns compare without case, *_bin collations with case)")


def _primary_note(col: Column) -> str:
    return (f"column '{col.name}': a {col.type} PRIMARY KEY is kept as a unique, NOT NULL key; the table's "
            "row id is the implicit integer column 'id' (only an integer PRIMARY KEY can be the row id)")


def _plan_key(table: str, key: ast.TableKey, by_name: dict[str, Column], plan: Plan, used: set[str]) -> None:
    if key.kind == "foreign":
        raise UserError("FOREIGN KEY constraints are not supported (SQLite would not enforce them here)",
                        errors.NotSupportedError)
    if key.kind == "check":
        name = key.name or f"{table}_chk_{len(plan.checks) + 1}"
        plan.checks.append(_check_sql(name, key.expr or "()"))
        return
    if key.kind == "primary" and len(key.columns) == 1 and by_name.get(key.columns[0].lower()) is by_name.get("id"):
        return                                           # PRIMARY KEY (id) or the declared key: the row id
    for name in key.columns:
        col = by_name.get(name.lower())
        if col is None:
            raise UserError(f"Key column '{name}' doesn't exist in table", errors.NoSuchColumn)
        if col.type in VECTOR_TYPES:
            raise UserError(f"column '{col.name}' is a vector column; it is indexed by knn_type='hnsw', "
                            "not by a key", errors.NotSupportedError)
    if key.kind == "primary" and [c.lower() for c in key.columns] == ["id"]:
        return                                           # the id already is the primary key
    base = "PRIMARY" if key.kind == "primary" else key.name or key.columns[0]
    if key.kind == "primary":
        plan.notes.append(f"PRIMARY KEY ({', '.join(key.columns)}) is kept as a unique key; the table's row id "
                          "is still the implicit column 'id'")
    plan.indexes.append(_index_sql(table, _unique_name(base, used), key.columns, unique=key.kind != "index"))


def _plan_options(options: Sequence[tuple[str, str]], plan: Plan) -> None:
    for key, value in options:
        if key == "comment":
            plan.comment = str(value)
        elif key in IGNORED_TABLE_OPTIONS or (key == "engine" and str(value).lower() in MYSQL_ENGINES):
            plan.notes.append(f"table option {key.upper()}={value} is accepted and ignored: tables are SQLite "
                              "tables, text is UTF-8")


def is_mysql_option(option: tuple[str, str]) -> bool:
    """MySQL table options that the Manticore option check must not see."""
    key, value = option
    return key == "comment" or key in IGNORED_TABLE_OPTIONS or (key == "engine" and str(value).lower() in MYSQL_ENGINES)


def check_primary_keys(stmt: ast.CreateTable) -> None:
    """MySQL: one primary key per table (ERROR 1068)."""
    declared = [d.name for d in stmt.columns if any(k == "primary_key" for k, _ in d.constraints)]
    declared += ["(" + ",".join(k.columns) + ")" for k in stmt.keys if k.kind == "primary"]
    if len(declared) > 1:
        raise UserError("Multiple primary key defined", errors.MultiplePrimaryKey)

