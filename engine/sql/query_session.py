"""What a MySQL session adds around every query handler: @variables and session functions become
literals before planning (engine/sql/variables.py), information_schema is filled when named, INSERT and
REPLACE follow MySQL's key and default rules (engine/sql/mysql_write.py), and the result sets
ROW_COUNT() / FOUND_ROWS() / LAST_INSERT_ID()."""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

import apsw
from sqlglot import exp

from tesseradb import errors
from tesseradb.errors import UserError

from tesseradb.grammar import ast
from tesseradb.results import Result
from tesseradb.sql import exact_division, group_check, information_schema, mysql_write, row_id, variables
from tesseradb.sql import qualified_names, temporal
from tesseradb.sql.database import Database


def _keep_names(expr: exp.Expression, changes: Callable[[exp.Expression], bool]) -> exp.Expression:
    """``SELECT DATABASE()``, ``SELECT 1/3`` name their column as written, not after what replaces it."""
    for select in expr.find_all(exp.Select):
        select.set("expressions", [
            exp.alias_(p, _written(p), quoted=True)
            if not isinstance(p, (exp.Alias, exp.Column, exp.Star)) and changes(p) else p
            for p in select.expressions])
    return expr


def _written(node: exp.Expression) -> str:
    """The expression as written (grammar/written_names.py), else in MySQL spelling (sqlglot reads
    DATABASE() and SCHEMA() as one node: DATABASE())."""
    if node.meta.get("written"):
        return str(node.meta["written"])
    text = node.sql(dialect="mysql", normalize_functions=False)
    return text.replace("SCHEMA()", "DATABASE()") if node.find(exp.CurrentSchema) is not None else text


def _divides(node: exp.Expression) -> bool:
    return node.find(exp.Div, exp.Avg) is not None


# SQLite's complaints about the SQL it was given, in MySQL's words
_SQLITE_ERRORS: list[tuple[re.Pattern[str], type[errors.Error], str]] = [
    (re.compile(r"no such function: (\w+)"), errors.NoSuchFunction, "FUNCTION {0} does not exist"),
    (re.compile(r'near "(.*)": syntax error'), errors.NotSupportedError,
     "This version of tesseradb doesn't yet support this statement: SQLite cannot run its translation "
     "(near '{0}')"),
    (re.compile(r"(.+) is not supported.*"), errors.NotSupportedError, "This version of tesseradb doesn't yet "
     "support '{0}'"),
]


def sqlite_error(exc: apsw.SQLError) -> BaseException:
    text = str(exc).split(": ", 1)[-1] if str(exc).startswith("SQLError") else str(exc)
    for pattern, kind, template in _SQLITE_ERRORS:
        match = pattern.fullmatch(text.strip())
        if match:
            return UserError(template.format(*match.groups()), kind)
    return exc


@dataclasses.dataclass(frozen=True)
class Facts:
    """What the session layer needs to know about a statement, from one walk of its tree (kept on the
    tree: a cached statement is walked once)."""
    tables: frozenset[str]          # table names and aliases, lower case
    variables: bool                 # @x, @@x or a session function (DATABASE(), LAST_INSERT_ID(), ...)
    information_schema: bool
    grouping: bool                  # GROUP BY or an aggregate somewhere
    division: bool                  # / or AVG: MySQL's exact-division scale (exact_division.py)
    qualified: bool = False         # db.table or db.table.column (qualified_names.py)


def facts(expr: exp.Expression) -> Facts:
    cached = expr.meta.get("tessera_session")
    if cached is not None:
        return cached
    tables: set[str] = set()
    found = {"variables": False, "information_schema": False, "grouping": False, "division": False,
             "qualified": False}
    for node in expr.walk():
        found["qualified"] |= qualified_names.is_qualified(node)
        if isinstance(node, exp.Table):
            tables.update(n.lower() for n in (node.name, node.alias) if n)
            found["information_schema"] |= node.db.lower() == information_schema.SCHEMA
        elif isinstance(node, (exp.Group, exp.AggFunc)):
            found["grouping"] = True
            found["division"] |= isinstance(node, exp.Avg)
        elif isinstance(node, exp.Div):
            found["division"] = True
        elif variables.is_candidate(node):
            found["variables"] = True
    result = Facts(frozenset(tables), **found)
    expr.meta["tessera_session"] = result
    return result


def _prepare(db: Database, stmt: ast.Query) -> ast.Query:
    """Rewrites and checks before the handler runs (each only when the statement needs it)."""
    known = facts(stmt.expr)
    if known.qualified:
        stmt = dataclasses.replace(stmt, expr=qualified_names.unqualify(db, stmt.expr))
    if any(t in db.tables and row_id.alias(db.tables[t]) for t in known.tables):
        stmt = dataclasses.replace(stmt, expr=row_id.rewrite(db.tables, stmt.expr))
    if temporal.needed(db.tables, known.tables):
        stmt = dataclasses.replace(stmt, expr=temporal.rewrite(db.tables, stmt.expr))
    if known.variables:
        expr = _keep_names(stmt.expr.copy(), variables.needs_substitution)
        stmt = dataclasses.replace(stmt, expr=variables.substitute(db, expr))
    if known.division:
        expr = _keep_names(stmt.expr.copy(), _divides)
        stmt = dataclasses.replace(stmt, expr=exact_division.apply(db.tables, expr))
    if known.information_schema:
        information_schema.prepare(db, stmt.expr)
    if known.grouping:
        group_check.check(db, stmt.expr)
    return stmt


def _target_name(expr: exp.Expression) -> str:
    target = expr.this.this if isinstance(expr.this, exp.Schema) else expr.this
    return target.name.lower() if isinstance(target, exp.Table) else ""


def insert_many(db: Database, stmt: ast.Query, param_sets: Any) -> Result:
    """executemany of an INSERT / REPLACE: the same MySQL rules as one INSERT, one batch for the rows."""
    stmt = _prepare(db, stmt)
    try:
        result = mysql_write.run_insert_many(db, stmt, list(param_sets))
    except apsw.SQLError as exc:
        raise sqlite_error(exc) from None
    variables.record(db, "insert", result)
    return result


def with_session(handler: Callable[..., Result]) -> Callable[..., Result]:
    def run(db: Database, stmt: ast.Query, params: Any = None) -> Result:
        stmt = _prepare(db, stmt)
        try:
            if stmt.kind == "insert":
                result = mysql_write.run_insert(handler, db, stmt, params)    # MySQL keys and defaults
            else:
                result = handler(db, stmt, params)
        except apsw.SQLError as exc:
            raise sqlite_error(exc) from None
        except apsw.ConstraintError as exc:             # an UPDATE that repeats a unique key
            table = db.tables.get(_target_name(stmt.expr))
            raise (mysql_write.duplicate_error(db, table, exc) if table is not None else exc) from None
        variables.record(db, stmt.kind, result)
        return result
    run.__name__ = getattr(handler, "__name__", "query")
    run.__doc__ = handler.__doc__
    return run
