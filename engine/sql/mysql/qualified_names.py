"""``db.table``: the name the server and ``DATABASE()`` report qualifies tables everywhere (issue 22).

A file holds one database; it is called after the file (``rag.db`` -> ``rag``, docs/compatibility.md)
and SQLite calls it ``main``. Both names qualify a table: in a query the qualifier is dropped before
SQLite sees the statement (``rag.pages`` is ``pages``, ``rag.pages.title`` is ``pages.title``); in a
DDL or SHOW statement another database's name is ``ERROR 1049 Unknown database``.
``information_schema`` keeps its own name.
"""
from __future__ import annotations

import dataclasses

from sqlglot import exp

from tesseradb import errors
from tesseradb.errors import UserError
from tesseradb.grammar import ast
from tesseradb.sql.mysql import variables
from tesseradb.sql.database import Database


def _names(stmt: object) -> list[str]:
    out: list[str] = []
    for f in dataclasses.fields(stmt):          # type: ignore[arg-type]
        value = getattr(stmt, f.name)
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, ast.QualifiedName):
                out.append(item.schema)
            elif f.name == "database" and isinstance(item, str):
                out.append(item)
    return out


def check(db: Database, stmt: ast.Statement) -> None:
    """A DDL/SHOW statement naming another database: 1049, before anything runs."""
    if isinstance(stmt, ast.Query) or not dataclasses.is_dataclass(stmt):
        return
    for schema in _names(stmt):
        if not variables.is_this_database(db, schema):
            raise UserError(f"Unknown database '{schema}'", errors.UnknownDatabase)


def _ours(db: Database, name: str) -> bool:
    return bool(name) and name.lower() != "main" and variables.is_this_database(db, name)


def is_qualified(node: exp.Expression) -> bool:
    return isinstance(node, (exp.Table, exp.Column)) and bool(node.args.get("db"))


def unqualify(db: Database, expr: exp.Expression) -> exp.Expression:
    """The statement with this database's name dropped from its table and column references."""
    expr = expr.copy()
    for node in list(expr.find_all(exp.Table, exp.Column)):
        if _ours(db, node.text("db")):
            node.set("db", None)
    return expr
