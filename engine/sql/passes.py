"""The passes a query goes through before its handler plans it, in order, in one table (:data:`PASSES`,
as sqlglot's optimizer keeps its RULES): declared keys read as the id, @variables and session
functions become literals (sql/mysql/variables.py), MySQL's exact division, information_schema filled
when named, ONLY_FULL_GROUP_BY. Each pass is a function of (database, tree, parameters) and runs only
when one walk of the tree (:func:`facts`) says the statement needs it."""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from sqlglot import exp


from tesseradb.grammar import ast
from tesseradb.sql.mysql import exact_division, group_check, information_schema, row_id, variables
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
    """The expression in MySQL spelling (sqlglot reads DATABASE() and SCHEMA() as one node: DATABASE())."""
    text = node.sql(dialect="mysql", normalize_functions=False)
    return text.replace("SCHEMA()", "DATABASE()") if node.find(exp.CurrentSchema) is not None else text


def _divides(node: exp.Expression) -> bool:
    return node.find(exp.Div, exp.Avg) is not None


@dataclasses.dataclass(frozen=True)
class Facts:
    """What the session layer needs to know about a statement, from one walk of its tree (kept on the
    tree: a cached statement is walked once)."""
    tables: frozenset[str]          # table names and aliases, lower case
    variables: bool                 # @x, @@x or a session function (DATABASE(), LAST_INSERT_ID(), ...)
    information_schema: bool
    grouping: bool                  # GROUP BY or an aggregate somewhere
    division: bool                  # / or AVG: MySQL's exact-division scale (exact_division.py)


def facts(expr: exp.Expression) -> Facts:
    cached = expr.meta.get("tessera_session")
    if cached is not None:
        return cached
    tables: set[str] = set()
    found = {"variables": False, "information_schema": False, "grouping": False, "division": False}
    for node in expr.walk():
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


def _row_id(db: Database, expr: exp.Expression, params: Any) -> exp.Expression:
    return row_id.rewrite(db.tables, expr)


def _variables(db: Database, expr: exp.Expression, params: Any) -> exp.Expression:
    return variables.substitute(db, _keep_names(expr.copy(), variables.needs_substitution))


def _exact_division(db: Database, expr: exp.Expression, params: Any) -> exp.Expression:
    return exact_division.apply(db.tables, _keep_names(expr.copy(), _divides))


def _information_schema(db: Database, expr: exp.Expression, params: Any) -> exp.Expression:
    information_schema.prepare(db, expr)
    return expr


def _group_check(db: Database, expr: exp.Expression, params: Any) -> exp.Expression:
    group_check.check(db, expr)
    return expr


@dataclasses.dataclass(frozen=True)
class Pass:
    name: str
    wanted: Callable[[Database, Facts], bool]        # from the statement's facts: does it need this pass?
    run: Callable[[Database, exp.Expression, Any], exp.Expression]


# in order; a pass sees the tree the passes before it left
PASSES: tuple[Pass, ...] = (
    Pass("declared_keys", lambda db, f: any(t in db.tables and row_id.alias(db.tables[t]) for t in f.tables),
         _row_id),
    Pass("session_variables", lambda db, f: f.variables, _variables),
    Pass("exact_division", lambda db, f: f.division, _exact_division),
    Pass("information_schema", lambda db, f: f.information_schema, _information_schema),
    Pass("only_full_group_by", lambda db, f: f.grouping, _group_check),
)


def prepare(db: Database, stmt: ast.Query, params: Any = None) -> ast.Query:
    """``stmt`` after every pass it needs (the tree is copied by a pass that changes it)."""
    known = facts(stmt.expr)
    expr = stmt.expr
    for step in PASSES:
        if step.wanted(db, known):
            expr = step.run(db, expr, params)
    return stmt if expr is stmt.expr else dataclasses.replace(stmt, expr=expr)
