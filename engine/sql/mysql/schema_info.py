"""The one reader of a table's facts in SQLite's own schema (PRAGMA table_info / index_list /
index_info, sqlite_master): columns as MySQL's SHOW COLUMNS and information_schema show them, indexes
and unique keys, views, table status. What SQLite enforces is what these report."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from tesseradb.catalog.tables import Table
from tesseradb.sql.database import Database
from tesseradb.sql.mysql import constraints, row_id
from tesseradb.storage.catalog import quote

TEXT_TYPES = {"text", "string", "json"}
COLLATION = "utf8mb4_0900_ai_ci"
PRIVILEGES = "select,insert,update,references"
ENGINE = "SQLite"


# -- indexes and keys ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Index:
    name: str
    unique: bool
    origin: str                     # SQLite's: c (CREATE INDEX), u (UNIQUE constraint), pk
    columns: tuple[str | None, ...]  # None for an expression column
    descending: tuple[bool, ...] = ()


def indexes(db: Database, table: Table) -> list[Index]:
    """Every SQLite index of ``table``, the engine's own (_tessera*) included."""
    out = []
    for _, name, unique, origin, _ in db.store.execute(f"PRAGMA index_list({quote(table.name)})"):
        info = [r for r in db.store.execute(f"PRAGMA index_xinfo({quote(name)})") if r[5]]   # key columns
        cols = tuple(None if r[2] is None else str(r[2]) for r in info)
        out.append(Index(str(name), bool(unique), str(origin), cols, tuple(bool(r[3]) for r in info)))
    return out


@dataclasses.dataclass(frozen=True)
class UniqueKey:
    name: str                  # the MySQL key name
    columns: tuple[str, ...]


def unique_keys(db: Database, table: Table) -> list[UniqueKey]:
    """The table's UNIQUE keys as MySQL names them (not the id, not the engine's own indexes)."""
    return [UniqueKey(constraints.key_name(table.name, i.name), i.columns) for i in indexes(db, table)
            if i.unique and i.origin != "pk" and not i.name.startswith("_tessera")
            and i.columns and None not in i.columns]


@dataclasses.dataclass(frozen=True)
class Key:
    """A key as MySQL shows it (SHOW CREATE TABLE, SHOW INDEX, information_schema): PRIMARY first."""
    name: str                  # PRIMARY, or the key's MySQL name
    unique: bool
    columns: tuple[str, ...]   # as the user names them (a declared key under its declared name)
    implicit: bool = False     # Manticore's implicit id: reported for reflection, not in SHOW CREATE TABLE
    descending: tuple[bool, ...] = ()


def keys(db: Database, table: Table) -> list[Key]:
    """The table's keys in MySQL's order: the primary key, then UNIQUE keys, then plain ones, each
    group in the order they were made. The primary key is a `PRIMARY` key SQLite holds (a non-integer
    or composite PRIMARY KEY), else the declared integer key, else Manticore's implicit id."""
    shown = row_id.alias(table) or "id"
    made = [str(r[0]) for r in db.store.execute(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? COLLATE NOCASE ORDER BY rowid",
        (table.name,))]
    order = {name: n for n, name in enumerate(made)}
    found = [Key(constraints.key_name(table.name, i.name), i.unique,
                 tuple(shown if str(c).lower() == "id" else str(c) for c in i.columns), descending=i.descending)
             for i in sorted(indexes(db, table), key=lambda i: order.get(i.name, len(order)))
             if not i.name.startswith(("_tessera", "sqlite_autoindex")) and i.columns and None not in i.columns]
    primary = [k for k in found if k.unique and k.name.upper() == "PRIMARY"][:1]
    if not primary:
        primary = [Key("PRIMARY", True, (shown,), implicit=row_id.alias(table) is None)]
    rest = [k for k in found if k not in primary]
    return primary + [k for k in rest if k.unique] + [k for k in rest if not k.unique]


@dataclasses.dataclass(frozen=True)
class Schema:
    """What INSERT checks need of a table's SQLite schema, read once per schema version."""
    keys: tuple[UniqueKey, ...]
    required: tuple[str, ...]      # NOT NULL columns without a default (not the id)


def schema(db: Database, table: Table) -> Schema:
    version = int(db.store.one("PRAGMA schema_version")[0])
    cache = db.schemas
    key = (table.name.lower(), version)
    if key not in cache:
        if len(cache) > 256:
            cache.clear()
        required = tuple(str(name) for _, name, _, notnull, default, pk in
                         db.store.execute(f"PRAGMA table_info({quote(table.name)})")
                         if notnull and default is None and not pk)
        cache[key] = Schema(tuple(unique_keys(db, table)), required)
    return cache[key]


# -- columns ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ColumnInfo:
    name: str
    position: int
    type_text: str
    type: str
    nullable: bool
    key: str                  # PRI, UNI, MUL or ''
    default: Any
    extra: str
    comment: str


def _keys(db: Database, table: Table) -> dict[str, str]:
    """column (lower) -> PRI / UNI / MUL, as MySQL's SHOW COLUMNS marks them."""
    keys: dict[str, str] = {}
    for index in indexes(db, table):
        if index.name.startswith("_tessera"):
            continue
        cols = index.columns
        if not cols or cols[0] is None:
            continue
        mark = "PRI" if index.origin == "pk" else "UNI" if index.unique and len(cols) == 1 else "MUL"
        keys.setdefault(str(cols[0]).lower(), mark)
    return keys


def column_infos(db: Database, table: Table) -> list[ColumnInfo]:
    pragma = {str(r[1]).lower(): r for r in db.store.execute(f"PRAGMA table_info({quote(table.name)})")}
    keys = _keys(db, table)
    out = []
    for n, col in enumerate(table.columns, start=1):
        row = pragma.get(col.name.lower())
        pk = bool(row and row[5])
        notnull = bool(row and row[3]) or pk
        options = dict(col.options)
        written = dict(col.constraints).get("default")      # as the user wrote it (MySQL text)
        default = _default_text(written if written is not None else row[4] if row else None)
        auto = pk and row_id.auto_increment(table)
        out.append(ColumnInfo(
            name=row_id.display_name(table, col), position=n, type_text=_lower(row_id.display_type(table, col)),
            type=col.type, nullable=not notnull, key="PRI" if pk else keys.get(col.name.lower(), ""),
            default=default, extra="auto_increment" if auto else "",
            comment=options.get("comment") or str(dict(col.constraints).get("comment") or "")))
    return out


def _lower(type_text: str) -> str:
    """MySQL prints a column type in lower case (``VARCHAR(80)`` -> ``varchar(80)``), enum values aside."""
    return type_text if "'" in type_text else type_text.lower()


def _default_text(value: Any) -> Any:
    """PRAGMA table_info's default is SQL text: 'abc' -> abc, NULL -> None, numbers as written."""
    if value is None or str(value).upper() == "NULL":
        return None
    text = str(value)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1].replace(text[0] * 2, text[0])
    return text


# -- tables and views ---------------------------------------------------------------------------------
def table_status_rows(db: Database) -> list[tuple]:
    """One row per table: name, engine, rows, next id, comment (SHOW TABLE STATUS, information_schema)."""
    rows = []
    for table in sorted(db.tables.values(), key=lambda t: t.name.lower()):
        count, top = db.store.one(f"SELECT COUNT(*), MAX(id) FROM {quote(table.name)}")
        rows.append((table.name, count, (top or 0) + 1, table.options.get("comment", "")))
    return rows


def view_names(db: Database) -> list[str]:
    return [r[0] for r in db.store.execute("SELECT name FROM sqlite_master WHERE type = 'view' ORDER BY name")]


def view_named(db: Database, name: str) -> str | None:
    """The stored spelling of the view called ``name`` (any case), or None."""
    row = db.store.one("SELECT name FROM sqlite_master WHERE type = 'view' AND name = ? COLLATE NOCASE", (name,))
    return row[0] if row else None
