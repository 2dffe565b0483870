"""The engine's own tables stay out of the user's database on every path.

The catalog (``_tessera_catalog``), chunk, full-text and pending tables are the engine's, and SQLite's
own schema tables and table-valued functions (``sqlite_master`` / ``sqlite_schema``, ``dbstat``,
``pragma_*``, which also show the file's absolute path) would reveal them, or the server's
directories. A statement that names one of them anywhere (FROM, a join, a subquery, a CTE, the
body of a view, INSERT ... SELECT, UPDATE / DELETE conditions) is refused as MySQL refuses an unknown
table (1146), before anything runs; SHOW, DESCRIBE and information_schema show the user's tables.
The generated SQL the engine itself runs is not a user statement and is not checked here.
"""
from __future__ import annotations

from sqlglot import exp

from tesseradb import errors
from tesseradb.errors import UserError
from tesseradb.grammar import ast

HIDDEN_PREFIXES = ("_tessera_", "sqlite_", "pragma_")
HIDDEN_NAMES = {"dbstat"}


def hidden(name: str) -> bool:
    lowered = name.lower()
    return lowered.startswith(HIDDEN_PREFIXES) or lowered in HIDDEN_NAMES


def check_tree(expr: exp.Expression) -> None:
    for table in expr.find_all(exp.Table):
        call = table.this
        name = str(call.this) if isinstance(call, exp.Anonymous) else table.name   # pragma_x('t')
        if name and hidden(name):
            raise errors.no_such_table(name)


def _trees(stmt: ast.Statement) -> list[exp.Expression]:
    if isinstance(stmt, ast.Explain):
        return _trees(stmt.statement)
    if isinstance(stmt, ast.Query):
        return [stmt.expr]
    if isinstance(stmt, ast.CreateView):
        return [stmt.query.expr]
    return []


def check(stmt: ast.Statement) -> None:
    """Refuse ``stmt`` when it names an engine or SQLite schema table (raises NoSuchTable)."""
    for tree in _trees(stmt):
        check_tree(tree)
