"""A database of the previous release stored ``DATE`` and ``DATETIME`` columns as Manticore's
timestamp (Unix seconds). When such a file is opened, those columns become MySQL's DATE / DATETIME
(issue 22) once, in one transaction: the catalog takes the new type, the column's declared type and
check in SQLite's schema are rewritten in place (values are stored the same way whatever a column
declares, so no table copy is needed), and every value is converted from Unix seconds (UTC) to ISO
text. A table with the layout ``tessera index`` made before issue 32 (``path, title, body, meta,
modified timestamp`` and its vector column) gets its ``modified`` converted the same way. A log
record at WARNING level (logger ``tesseradb.dates``) says which columns were converted. A busy or
read-only file is left as it is and tried again at the next open. Only tables whose catalog entry
predates MySQL dates (no ``mysql_dates`` mark) are looked at: a table made since keeps a ``timestamp``
column its user declared, whatever its layout.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable

import apsw

from tesseradb.catalog.tables import Column, Table
from tesseradb.catalog.types import TYPES
from tesseradb.catalog.vector_columns import VECTOR_TYPES
from tesseradb.storage import catalog
from tesseradb.storage.catalog import quote
from tesseradb.storage.rowstore import RowStore

log = logging.getLogger("tesseradb.dates")
NOW_SECONDS = "(CAST(strftime('%s', 'now') AS INTEGER))"
CONVERSIONS = {"date": ("date({c}, 'unixepoch')", "CURRENT_DATE"),
               "datetime": ("datetime({c}, 'unixepoch')", "CURRENT_TIMESTAMP")}


def _old_kind(col: Column) -> str | None:
    """'date' / 'datetime' for a column the previous release stored as Unix seconds."""
    word = col.type_text.strip().lower().split("(")[0].split()[0] if col.type_text.strip() else ""
    return word if col.type == "timestamp" and word in CONVERSIONS else None


def _declaration(kind: str, name: str) -> str:
    ctype = TYPES[kind]
    message = f"{ctype.message} for column '{name}'"
    return f"{quote(name)} {ctype.decl} CONSTRAINT {quote(message)} CHECK ({ctype.check.format(c=quote(name))})"


#: The layout ``tessera index`` created before issue 32 (``modified timestamp``): such a table's
#: ``modified`` becomes a DATETIME too, the same instants as ISO text.
INDEX_LAYOUT = ("path", "title", "body", "meta", "modified")


def _index_made(table: Table, col: Column) -> bool:
    names = [c.name.lower() for c in table.columns
             if c.type not in VECTOR_TYPES and c.name.lower() != "id"]
    return (col.name.lower() == "modified" and col.type == "timestamp" and names == list(INDEX_LAYOUT)
            and col.type_text.strip().lower() == "timestamp")


def pending(tables: Iterable[Table]) -> list[tuple[Table, Column, str]]:
    return [(t, c, kind) for t in tables if not t.mysql_dates for c in t.columns
            if (kind := _old_kind(c) or ("datetime" if _index_made(t, c) else None)) is not None]


def _convert_column(store: RowStore, table: Table, col: Column, kind: str) -> None:
    (sql,) = store.one("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table.name,))
    old = _declaration("timestamp", col.name)
    if old not in sql:
        raise apsw.SQLError(f"unexpected schema for column {table.name}.{col.name}")
    new_sql = sql.replace(old, _declaration(kind, col.name))
    type_text = col.type_text if _old_kind(col) else kind
    new_sql = new_sql.replace(f"DEFAULT {NOW_SECONDS}", f"DEFAULT {CONVERSIONS[kind][1]}")
    version = int(store.one("PRAGMA schema_version")[0])
    store.execute("PRAGMA writable_schema = ON")
    try:
        store.execute("UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?", (new_sql, table.name))
        store.execute(f"PRAGMA schema_version = {version + 1}")
    finally:
        store.execute("PRAGMA writable_schema = OFF")
    convert = CONVERSIONS[kind][0].format(c=quote(col.name))
    store.execute(f"UPDATE {quote(table.name)} SET {quote(col.name)} = {convert} "
                  f"WHERE typeof({quote(col.name)}) = 'integer'")
    table.columns[table.columns.index(col)] = Column(col.name, kind, type_text, col.options, col.constraints)


def upgrade(store: RowStore, tables: Iterable[Table]) -> int:
    """Convert every such column; returns how many were converted."""
    todo = pending(tables)
    if not todo or store.in_transaction:
        return 0
    try:
        store.begin()
        for table, col, kind in todo:
            _convert_column(store, table, col, kind)
        for table in {id(t): t for t, _, _ in todo}.values():
            table.mysql_dates = True
            catalog.save(store, table.name, table.to_json())
        store.commit()
    except apsw.Error as exc:
        store.rollback()
        log.warning("could not convert the DATE/DATETIME columns now (%s); retrying at the next open", exc)
        return 0
    log.warning("converted %d DATE/DATETIME column(s) from Unix seconds to MySQL dates: %s", len(todo),
                ", ".join(f"{t.name}.{c.name} ({kind})" for t, c, kind in todo))
    return len(todo)
