"""SET, USE and LOCK TABLES (MySQL): the handlers. The session state they change and the rules of
each system variable are tesseradb.sql.mysql.variables."""
from __future__ import annotations

from typing import Any

from sqlglot import exp

from tesseradb import errors
from tesseradb.errors import UserError
from tesseradb.grammar import ast
from tesseradb.results import Result
from tesseradb.sql.database import Database
from tesseradb.sql.mysql.variables import set_names, set_value, evaluate, is_this_database, session, set_system


# -- SET ----------------------------------------------------------------------------------------------
def set_statement(db: Database, stmt: ast.SetStatement, params: Any = None) -> Result:
    for item in stmt.expr.expressions:
        _set_item(db, item, params)
    return Result(rowcount=0)


def _set_item(db: Database, item: exp.Expression, params: Any) -> None:
    kind = str(item.args.get("kind") or "").upper()
    if kind in ("NAMES", "CHARACTER SET", "CHARSET"):
        set_names(db, item)
        return
    if kind == "TRANSACTION":
        db.warn("SET TRANSACTION is accepted and changes nothing: every transaction is SERIALIZABLE "
                "(SQLite)", 1287, "Note")
        return
    target, value = item.this, item.this
    if not isinstance(target, exp.EQ):
        raise UserError(f"syntax error near '{item.sql(dialect='mysql')[:60]}'", errors.SqlSyntaxError)
    target, value = target.this, target.expression
    if isinstance(target, exp.Parameter):
        session(db).user[target.name.lower()] = evaluate(db, value, params)
        return
    scope = kind or (str(target.args.get("kind") or "").upper() if isinstance(target, exp.SessionParameter) else "")
    set_system(db, target.name.lower(), set_value(value), scope)


# -- USE --------------------------------------------------------------------------------------------
def use_database(db: Database, stmt: ast.UseDatabase, params: Any = None) -> Result:
    if not is_this_database(db, stmt.name):
        raise UserError(f"Unknown database '{stmt.name}'", errors.UnknownDatabase)
    return Result(rowcount=0)


# -- LOCK TABLES / UNLOCK TABLES -------------------------------------------------------------------
def lock_tables(db: Database, stmt: ast.LockTables, params: Any = None) -> Result:
    """Accepted (mysqldump writes them around its INSERTs): the tables must exist; a write transaction
    already locks the whole database file, so nothing more is locked."""
    for name in stmt.tables:
        db.table(name)
    if stmt.tables:
        db.warn("LOCK TABLES is accepted and locks nothing more: a write transaction locks the whole "
                "database file", 1287, "Note")
    return Result(rowcount=0)
