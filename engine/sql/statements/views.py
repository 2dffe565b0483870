"""CREATE [OR REPLACE] VIEW and DROP VIEW [IF EXISTS] (MySQL). The view's SELECT is translated like
any query and SQLite keeps the view; SELECTs over it are plain SQLite. A vector search (knn(), MATCH)
needs the planner at query time, so a view may not contain one."""
from __future__ import annotations

from typing import Any

from sqlglot import exp

from tesseradb import errors
from tesseradb.catalog import sql_functions
from tesseradb.errors import UserError
from tesseradb.grammar import ast
from tesseradb.results import Result
from tesseradb.sql.database import Database
from tesseradb.sql.mysql import row_id
from tesseradb.sql.mysql.schema_info import view_named
from tesseradb.sql.naming import name_as_written
from tesseradb.storage.catalog import quote

SEARCH_FUNCTIONS = sql_functions.names()      # every function that searches (catalog/sql_functions.py)


def _check_body(select: exp.Expression) -> None:
    for node in select.walk():
        name = node.name.lower() if isinstance(node, exp.Anonymous) else type(node).__name__.lower()
        if isinstance(node, (exp.Anonymous, exp.MatchAgainst)) and name in SEARCH_FUNCTIONS | {"matchagainst"}:
            raise UserError("a view cannot contain a vector or full-text search (knn(), MATCH()): run the "
                            "search in the SELECT that reads the view", errors.NotSupportedError)
        if isinstance(node, (exp.Parameter, exp.SessionParameter)):
            raise UserError("View's SELECT contains a variable or parameter", errors.ProgrammingError)
        if isinstance(node, exp.Placeholder):
            raise UserError("View's SELECT contains a variable or parameter", errors.ProgrammingError)


def create_view(db: Database, stmt: ast.CreateView, params: Any = None) -> Result:
    if stmt.name.lower() in db.tables:
        raise UserError(f"table '{stmt.name}' already exists", errors.TableExists)
    existing = view_named(db, stmt.name)
    if existing is not None and not stmt.or_replace:
        raise UserError(f"table '{stmt.name}' already exists", errors.TableExists)
    select = stmt.query.expr
    _check_body(select)
    if row_id.needs_rewrite(db.tables, select):
        select = row_id.rewrite(db.tables, select)      # a declared key (`pk`) is the row id underneath
    if existing is not None:
        db.store.execute(f"DROP VIEW {quote(existing)}")
    columns = f" ({', '.join(quote(c) for c in stmt.columns)})" if stmt.columns else ""
    db.store.execute(f"CREATE VIEW {quote(stmt.name)}{columns} AS {name_as_written(select.copy(), nested=False).sql(dialect='sqlite')}")
    list(db.store.execute(f"SELECT * FROM {quote(stmt.name)} LIMIT 0"))   # MySQL checks tables and columns now
    return Result(rowcount=0)


def drop_view(db: Database, stmt: ast.DropView, params: Any = None) -> Result:
    found = {name: view_named(db, name) for name in stmt.names}
    missing = [n for n, v in found.items() if v is None]
    if missing and not stmt.if_exists:
        raise UserError(f"Unknown table '{', '.join(missing)}'", errors.UnknownTable)
    for name in missing:
        db.warn(f"Unknown table '{name}'", 1051, "Note")
    for view in found.values():
        if view is not None:
            db.store.execute(f"DROP VIEW {quote(view)}")
    return Result(rowcount=0)
