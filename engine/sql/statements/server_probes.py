"""What GUI tools (DBeaver, MySQL Workbench, DataGrip, HeidiSQL) probe when they connect, answered in
MySQL's layouts (issue 22): SHOW [STORAGE] ENGINES, SHOW CHARSET / CHARACTER SET, SHOW COLLATION,
SHOW PLUGINS, SHOW GRANTS. The answers describe what tessera is: one engine (SQLite; ``ENGINE=InnoDB``
in CREATE TABLE is accepted and stored the same way), UTF-8 text only, every privilege for whoever
opens the file (an embedded database has no users)."""
from __future__ import annotations

import fnmatch
from typing import Any

from tesseradb.grammar import ast
from tesseradb.results import Result
from tesseradb.sql.database import Database

ENGINES = (["Engine", "Support", "Comment", "Transactions", "XA", "Savepoints"], [
    ("SQLite", "DEFAULT", "SQLite through apsw: rows, FTS5 full-text, FAISS vector indexes", "YES", "NO", "YES"),
    ("InnoDB", "YES", "accepted in CREATE TABLE ... ENGINE=InnoDB: stored as SQLite", "YES", "NO", "YES"),
])
CHARSETS = (["Charset", "Description", "Default collation", "Maxlen"], [
    ("utf8mb3", "UTF-8 Unicode (stored as utf8mb4)", "utf8mb3_general_ci", 3),
    ("utf8mb4", "UTF-8 Unicode", "utf8mb4_0900_ai_ci", 4),
])
COLLATIONS = (["Collation", "Charset", "Id", "Default", "Compiled", "Sortlen", "Pad_attribute"], [
    ("utf8mb4_0900_ai_ci", "utf8mb4", 255, "Yes", "Yes", 0, "NO PAD"),
    ("utf8mb4_bin", "utf8mb4", 46, "", "Yes", 1, "PAD SPACE"),
    ("utf8mb4_general_ci", "utf8mb4", 45, "", "Yes", 1, "PAD SPACE"),
    ("utf8mb4_unicode_ci", "utf8mb4", 224, "", "Yes", 8, "PAD SPACE"),
])
PLUGINS = (["Name", "Status", "Type", "Library", "License"], [
    ("sqlite", "ACTIVE", "STORAGE ENGINE", None, "Public Domain"),
    ("fts5", "ACTIVE", "FTPARSER", None, "Public Domain"),
    ("faiss_hnsw", "ACTIVE", "VECTOR INDEX", None, "MIT"),
])


def _like(pattern: str | None, value: str) -> bool:
    if pattern is None:
        return True
    return fnmatch.fnmatchcase(value.lower(), pattern.lower().replace("%", "*").replace("_", "?"))


def _table(spec: tuple[list[str], list[tuple]], stmt: ast.ShowSession) -> Result:
    names, rows = spec
    kept = [r for r in rows if _like(stmt.like, str(r[0]))]
    return Result(columns=[(n, None) for n in names], rows=kept, rowcount=len(kept))


def _grants(db: Database, stmt: ast.ShowSession) -> Result:
    return Result(columns=[("Grants for tessera@localhost", None)],
                  rows=[("GRANT ALL PRIVILEGES ON *.* TO `tessera`@`localhost` WITH GRANT OPTION",)], rowcount=1)


SHOW: dict[str, Any] = {
    "engines": lambda db, stmt: _table(ENGINES, stmt),
    "charset": lambda db, stmt: _table(CHARSETS, stmt),
    "collation": lambda db, stmt: _table(COLLATIONS, stmt),
    "plugins": lambda db, stmt: _table(PLUGINS, stmt),
    "grants": _grants,
}
