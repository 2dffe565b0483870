"""The passes a statement goes through, in order, in one table (:data:`PASSES`, as sqlglot's optimizer
keeps its RULES). Each is a function of (database, tree, parameters) returning the tree.

- ``session`` passes run before every execution of a query (its parameters unbound): declared keys
  read as the id, @variables and session functions become literals (sql/mysql/variables.py), MySQL's
  exact division, information_schema filled when named, ONLY_FULL_GROUP_BY. Each runs only when one
  walk of the tree (:func:`facts`) says the statement needs it.
- ``plan`` passes run when a SELECT is planned (once per cached plan, parameters bound): computed
  columns named as written, the engine's own tables refused, LENGTH() and TO_STRING() of vector
  columns; then :func:`plan` hands the tree to the search planning (sql/search/select_plan.py) when it
  searches (sql/search/planned.py tells).

EXPLAIN lists the passes that changed the statement (:class:`Trace`)."""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from sqlglot import exp

from tesseradb.grammar import ast
from tesseradb.sql.database import Database
from tesseradb.sql.mysql import row_id, variables
from tesseradb.sql.mysql import qualified_names, temporal
from tesseradb.sql.naming import name_as_written
from tesseradb.sql.search import planned as plain
from tesseradb.sql.search.planned import Planned


INFORMATION_SCHEMA = "information_schema"     # the schema's name (sql/mysql/information_schema.py)


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
            found["information_schema"] |= node.db.lower() == INFORMATION_SCHEMA
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


def _qualified_names(db: Database, expr: exp.Expression, params: Any) -> exp.Expression:
    return qualified_names.unqualify(db, expr)


def _temporal(db: Database, expr: exp.Expression, params: Any) -> exp.Expression:
    return temporal.rewrite(db.tables, expr)


def _row_id(db: Database, expr: exp.Expression, params: Any) -> exp.Expression:
    return row_id.rewrite(db.tables, expr)


def _variables(db: Database, expr: exp.Expression, params: Any) -> exp.Expression:
    return variables.substitute(db, name_as_written(expr.copy(), variables.needs_substitution))


# The passes a statement needs only when it uses the feature import their module then (start-up).

def _exact_division(db: Database, expr: exp.Expression, params: Any) -> exp.Expression:
    from tesseradb.sql.mysql import exact_division
    return exact_division.apply(db.tables, name_as_written(expr.copy(), _divides))


def _information_schema(db: Database, expr: exp.Expression, params: Any) -> exp.Expression:
    from tesseradb.sql.mysql import information_schema
    information_schema.prepare(db, expr)
    return expr


def _group_check(db: Database, expr: exp.Expression, params: Any) -> exp.Expression:
    from tesseradb.sql.mysql import group_check
    group_check.check(db, expr)
    return expr


def _name_as_written(db: Database, expr: exp.Expression, bound: Any) -> exp.Expression:
    return name_as_written(expr, nested=False)


def _internal_tables(db: Database, expr: exp.Expression, bound: Any) -> exp.Expression:
    plain.check_internal(expr)
    return expr


def _vector_length(db: Database, expr: exp.Expression, bound: Any) -> exp.Expression:
    plain.rewrite_lengths(db, expr)
    return expr


def _vector_to_string(db: Database, expr: exp.Expression, bound: Any) -> exp.Expression:
    plain.rewrite_to_string(db, expr)
    return expr


SESSION, PLAN = "session", "plan"


def _always(db: Database, known: Facts | None) -> bool:
    return True


@dataclasses.dataclass(frozen=True)
class Pass:
    name: str
    stage: str                                              # SESSION or PLAN
    wanted: Callable[[Database, Facts | None], bool]        # from the statement's facts: does it need this pass?
    run: Callable[[Database, exp.Expression, Any], exp.Expression]


# in order; a pass sees the tree the passes before it left
PASSES: tuple[Pass, ...] = (
    Pass("database_name", SESSION, lambda db, f: f.qualified, _qualified_names),      # issue 22
    Pass("declared_keys", SESSION,
         lambda db, f: any(t in db.tables and row_id.renamed(db.tables[t]) for t in f.tables), _row_id),
    Pass("dates_compared", SESSION, lambda db, f: temporal.needed(db.tables, f.tables), _temporal),   # issue 22
    Pass("session_variables", SESSION, lambda db, f: f.variables, _variables),
    Pass("exact_division", SESSION, lambda db, f: f.division, _exact_division),
    Pass("information_schema", SESSION, lambda db, f: f.information_schema, _information_schema),
    Pass("only_full_group_by", SESSION, lambda db, f: f.grouping, _group_check),
    Pass("name_as_written", PLAN, _always, _name_as_written),
    Pass("internal_tables", PLAN, _always, _internal_tables),
    Pass("vector_length", PLAN, _always, _vector_length),
    Pass("vector_to_string", PLAN, _always, _vector_to_string),
)


class Trace:
    """For EXPLAIN: the names of the passes that changed the statement, in order."""

    def __init__(self) -> None:
        self.changed: list[str] = []

    def run(self, step: Pass, db: Database, expr: exp.Expression, params: Any) -> exp.Expression:
        before = expr.sql()
        after = step.run(db, expr, params)
        if after.sql() != before:
            self.changed.append(step.name)
        return after


def _run(stage: str, db: Database, expr: exp.Expression, params: Any, known: Facts | None,
         trace: Trace | None, ran: list[str] | None = None) -> exp.Expression:
    for step in PASSES:
        if step.stage == stage and step.wanted(db, known):
            if ran is not None:
                ran.append(step.name)
            expr = trace.run(step, db, expr, params) if trace is not None else step.run(db, expr, params)
    return expr


def prepare(db: Database, stmt: ast.Query, params: Any = None, trace: Trace | None = None) -> ast.Query:
    """``stmt`` after every session pass it needs (the tree is copied by a pass that changes it).

    Whether a pass is wanted depends on the statement's tree and the catalog only (``PASSES``): a
    statement the cache holds that wanted none is not asked again until the catalog changes
    (``StatementCache.clear_plans``), which saved ~20 us of a cached knn SELECT run right after the
    model (docs/benchmarks.md, issue 37)."""
    if trace is None and db.statements.wants_no_session_pass(stmt):
        return stmt
    ran: list[str] = []
    expr = _run(SESSION, db, stmt.expr, params, facts(stmt.expr), trace, ran)
    if not ran:
        db.statements.note_no_session_pass(stmt)
    return stmt if expr is stmt.expr else dataclasses.replace(stmt, expr=expr)


def plan(db: Database, expr: exp.Expression, bound: dict[str, Any], options: tuple = (),
         trace: Trace | None = None) -> Planned:
    """The plan of a SELECT whose parameters are bound: the plan passes on a copy, then the search
    planning (knn lifting, MATCH, hybrid), imported when a statement first searches."""
    expr = _run(PLAN, db, expr.copy(), bound, None, trace)
    if not plain.searches(expr, options):
        return Planned(expr.sql(dialect="sqlite"), bound)
    from tesseradb.sql.search import select_plan
    return select_plan.plan_select(db, expr, bound, options)
