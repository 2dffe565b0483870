"""``information_schema.TABLES / COLUMNS / STATISTICS / KEY_COLUMN_USAGE / TABLE_CONSTRAINTS / SCHEMATA``,
as GUI tools and ORMs read them.

A query that names ``information_schema`` gets a private in-memory SQLite database attached under that
name, whose tables are refilled from our catalog just before the query runs; SQLite then runs the
query like any other (joins, WHERE, ORDER BY). Nothing is stored with the database file.
"""
from __future__ import annotations

from sqlglot import exp

from tesseradb.sql.mysql import schema_info, server_facts, variables
from tesseradb.sql.database import Database

SCHEMA = "information_schema"
CATALOG = "def"
TABLES: dict[str, tuple[str, ...]] = {
    "SCHEMATA": ("CATALOG_NAME", "SCHEMA_NAME", "DEFAULT_CHARACTER_SET_NAME", "DEFAULT_COLLATION_NAME",
                 "SQL_PATH"),
    "TABLES": ("TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "TABLE_TYPE", "ENGINE", "VERSION",
               "ROW_FORMAT", "TABLE_ROWS", "AVG_ROW_LENGTH", "DATA_LENGTH", "INDEX_LENGTH", "AUTO_INCREMENT",
               "CREATE_TIME", "UPDATE_TIME", "TABLE_COLLATION", "CREATE_OPTIONS", "TABLE_COMMENT"),
    "COLUMNS": ("TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "COLUMN_NAME", "ORDINAL_POSITION",
                "COLUMN_DEFAULT", "IS_NULLABLE", "DATA_TYPE", "CHARACTER_MAXIMUM_LENGTH", "NUMERIC_PRECISION",
                "NUMERIC_SCALE", "CHARACTER_SET_NAME", "COLLATION_NAME", "COLUMN_TYPE", "COLUMN_KEY", "EXTRA",
                "PRIVILEGES", "COLUMN_COMMENT"),
    "STATISTICS": ("TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "NON_UNIQUE", "INDEX_SCHEMA", "INDEX_NAME",
                   "SEQ_IN_INDEX", "COLUMN_NAME", "COLLATION", "CARDINALITY", "SUB_PART", "PACKED", "NULLABLE",
                   "INDEX_TYPE", "COMMENT", "INDEX_COMMENT", "IS_VISIBLE", "EXPRESSION"),
    # keys as constraints (issue 36): what ORMs and GUI row editors read to find a row's key
    "KEY_COLUMN_USAGE": ("CONSTRAINT_CATALOG", "CONSTRAINT_SCHEMA", "CONSTRAINT_NAME", "TABLE_CATALOG",
                         "TABLE_SCHEMA", "TABLE_NAME", "COLUMN_NAME", "ORDINAL_POSITION",
                         "POSITION_IN_UNIQUE_CONSTRAINT", "REFERENCED_TABLE_SCHEMA", "REFERENCED_TABLE_NAME",
                         "REFERENCED_COLUMN_NAME"),
    "TABLE_CONSTRAINTS": ("CONSTRAINT_CATALOG", "CONSTRAINT_SCHEMA", "CONSTRAINT_NAME", "TABLE_SCHEMA",
                          "TABLE_NAME", "CONSTRAINT_TYPE", "ENFORCED"),
    # what the server is (mysql/server_facts.py, the same tables SHOW ENGINES / CHARSET / COLLATION read)
    "ENGINES": ("ENGINE", "SUPPORT", "COMMENT", "TRANSACTIONS", "XA", "SAVEPOINTS"),
    "CHARACTER_SETS": ("CHARACTER_SET_NAME", "DEFAULT_COLLATE_NAME", "DESCRIPTION", "MAXLEN"),
    "COLLATIONS": ("COLLATION_NAME", "CHARACTER_SET_NAME", "ID", "IS_DEFAULT", "IS_COMPILED", "SORTLEN",
                   "PAD_ATTRIBUTE"),
}


def referenced(expr: exp.Expression) -> bool:
    return any(t.args.get("db") is not None and t.db.lower() == SCHEMA for t in expr.find_all(exp.Table))


def prepare(db: Database, expr: exp.Expression) -> None:
    """Before a statement that reads information_schema: attach it (once) and refill its tables."""
    if not referenced(expr):
        return
    attached = {str(r[1]).lower() for r in db.store.execute("PRAGMA database_list")}
    if SCHEMA not in attached:
        db.store.execute(f"ATTACH DATABASE ':memory:' AS {SCHEMA}")
        for name, columns in TABLES.items():
            db.store.execute(f"CREATE TABLE {SCHEMA}.{name} ({', '.join(columns)})")
    for name, fill in FILLERS.items():
        db.store.execute(f"DELETE FROM {SCHEMA}.{name}")
        rows = fill(db)
        if rows:
            marks = ", ".join("?" * len(TABLES[name]))
            db.store.executemany(f"INSERT INTO {SCHEMA}.{name} VALUES ({marks})", rows)


def _schemata(db: Database) -> list[tuple]:
    return [(CATALOG, name, "utf8mb4", schema_info.COLLATION, None)
            for name in (SCHEMA, variables.database_name(db))]


def _tables(db: Database) -> list[tuple]:
    tables = [(CATALOG, variables.database_name(db), name, "BASE TABLE", schema_info.ENGINE, 10, "Dynamic", count,
               None, None, None, next_id, None, None, schema_info.COLLATION, "", comment)
              for name, count, next_id, comment in schema_info.table_status_rows(db)]
    return tables + [(CATALOG, variables.database_name(db), name, "VIEW") + (None,) * 12 + ("VIEW",)
                     for name in schema_info.view_names(db)]


def _data_type(type_text: str) -> str:
    return type_text.split("(")[0].split()[0].lower()


def _columns(db: Database) -> list[tuple]:
    rows = []
    for table in db.tables.values():
        for i in schema_info.column_infos(db, table):
            text = i.type in schema_info.TEXT_TYPES
            rows.append((CATALOG, variables.database_name(db), table.name, i.name, i.position, i.default,
                         "YES" if i.nullable else "NO", _data_type(i.type_text), None, None, None,
                         "utf8mb4" if text else None, schema_info.COLLATION if text else None,
                         i.type_text, i.key, i.extra, schema_info.PRIVILEGES, i.comment))
    return rows


def _statistics(db: Database) -> list[tuple]:
    """One row per key column (schema_info.keys: the primary key first, the implicit id included)."""
    name = variables.database_name(db)
    rows = []
    for table in db.tables.values():
        nullable = {i.name.lower(): i.nullable for i in schema_info.column_infos(db, table)}
        for key in schema_info.keys(db, table):
            descending = key.descending or (False,) * len(key.columns)
            for seq, (column, desc) in enumerate(zip(key.columns, descending), start=1):
                rows.append((CATALOG, name, table.name, 0 if key.unique else 1, name, key.name, seq, column,
                             "D" if desc else "A", None, None, None, "YES" if nullable.get(column.lower()) else "",
                             "BTREE", "", "", "YES", None))
    return rows


def _unique_keys(db: Database):
    for table in db.tables.values():
        for key in schema_info.keys(db, table):
            if key.unique:
                yield table, key


def _key_column_usage(db: Database) -> list[tuple]:
    name = variables.database_name(db)
    return [(CATALOG, name, key.name, CATALOG, name, table.name, column, seq, None, None, None, None)
            for table, key in _unique_keys(db) for seq, column in enumerate(key.columns, start=1)]


def _table_constraints(db: Database) -> list[tuple]:
    name = variables.database_name(db)
    return [(CATALOG, name, key.name, name, table.name, "PRIMARY KEY" if key.name.upper() == "PRIMARY" else "UNIQUE",
             "YES") for table, key in _unique_keys(db)]


def _character_sets(db: Database) -> list[tuple]:
    return [(name, collation, description, maxlen) for name, description, collation, maxlen in server_facts.CHARSETS[1]]


FILLERS = {"SCHEMATA": _schemata, "TABLES": _tables, "COLUMNS": _columns, "STATISTICS": _statistics,
           "KEY_COLUMN_USAGE": _key_column_usage, "TABLE_CONSTRAINTS": _table_constraints,
           "ENGINES": lambda db: list(server_facts.ENGINES[1]), "CHARACTER_SETS": _character_sets,
           "COLLATIONS": lambda db: list(server_facts.COLLATIONS[1])}
