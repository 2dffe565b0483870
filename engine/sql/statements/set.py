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
from tesseradb.sql.mysql.variables import (SYSTEM, evaluate, is_this_database, session, set_names, set_system,
                                           set_value)


# -- SET ----------------------------------------------------------------------------------------------
def set_statement(db: Database, stmt: ast.SetStatement, params: Any = None) -> Result:
    """Every item, or none: as in MySQL, when one assignment fails the statement changes no variable
    (``SET @x = 1, sql_mode = 'NO_SUCH_MODE'`` leaves ``@x`` as it was)."""
    state = session(db)
    before = dict(state.system), dict(state.user), state.lexing
    try:
        for item in stmt.expr.expressions:
            _set_item(db, item, params)
    except BaseException:
        for kept, was in zip((state.system, state.user), before):   # in place: others hold these dicts
            kept.clear()
            kept.update(was)
        state.lexing = before[2]
        raise
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


def commits(stmt: ast.SetStatement) -> bool:
    """``SET autocommit = 1`` (ON, TRUE) commits the open transaction, as in MySQL, even inside BEGIN
    (planner.HANDLERS reads this: the implicit commit of a SET is decided before it runs)."""
    for item in stmt.expr.expressions:
        target = item.this
        if not isinstance(target, exp.EQ) or isinstance(target.this, exp.Parameter):
            continue
        if target.this.name.lower() == "autocommit" and _switches_on(target.expression):
            return True
    return False


def _switches_on(value: exp.Expression) -> bool:
    try:
        return bool(SYSTEM["autocommit"].check("autocommit", set_value(value)))
    except (UserError, ValueError, TypeError):      # not a literal: SET refuses it when it runs
        return False


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
