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
from tesseradb.sql.mysql import variables
from tesseradb.sql.mysql.server_facts import CHARSETS, COLLATIONS, ENGINES, PLUGINS


def _like(pattern: str | None, value: str) -> bool:
    if pattern is None:
        return True
    return fnmatch.fnmatchcase(value.lower(), pattern.lower().replace("%", "*").replace("_", "?"))


def _table(spec: tuple[list[str], list[tuple]], stmt: ast.ShowSession) -> Result:
    names, rows = spec
    kept = [r for r in rows if _like(stmt.like, str(r[0]))]
    return Result(columns=[(n, None) for n in names], rows=kept, rowcount=len(kept))


def _grants(db: Database, stmt: ast.ShowSession) -> Result:
    """The session's account, the one USER() names (variables.account)."""
    user, _, host = variables.account(db).partition("@")
    host = host or "%"
    return Result(columns=[(f"Grants for {user}@{host}", None)],
                  rows=[(f"GRANT ALL PRIVILEGES ON *.* TO `{user}`@`{host}` WITH GRANT OPTION",)], rowcount=1)


SHOW: dict[str, Any] = {
    "engines": lambda db, stmt: _table(ENGINES, stmt),
    "charset": lambda db, stmt: _table(CHARSETS, stmt),
    "collation": lambda db, stmt: _table(COLLATIONS, stmt),
    "plugins": lambda db, stmt: _table(PLUGINS, stmt),
    "grants": _grants,
}
