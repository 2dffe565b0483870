"""Per connection: parsed statements by SQL text, and the plans of SELECTs, reused across executes.

Measured on the manual (docs/benchmarks.md, 'Query latency'): sqlglot parsing the same text again,
deep-copying the tree and generating the same SQLite SQL were about 1.4 ms of a 6 ms text knn query.
A statement that repeats its text (parameters bound per execute, the way every driver and the wire
server send queries) now pays that once:

- ``parse(sql)``: the parsed SELECT for a text seen before (an LRU of ``SIZE`` texts). Parsing does
  not depend on the schema; other statements are parsed every time (they are cheap or unique).
- ``plan_for(expr)`` / ``keep_plan(expr, plan)``: a SELECT's plan (the SQLite SQL it becomes, and how
  to rebuild its knn() request from the parameters) keyed by the parsed tree's identity, so a tree
  that the session replaced (``@variables`` substituted) never finds a stale plan.
- ``names_no_hidden_table(stmt, check)``: the check that a statement names none of the engine's own
  tables, run once per cached statement (it walked the whole tree on every execute).
- ``wants_no_session_pass(stmt)`` / ``note_no_session_pass(stmt)``: a cached statement that needed
  none of the session passes (sql/passes.py: whether one is wanted depends on the tree and the
  catalog) skips asking each of them again.
- ``clear_plans()``: after DDL, and whenever the connection reloads its catalog (another
  connection's DDL, a ROLLBACK): a plan may depend on the tables' columns and vector columns, and so
  may whether a session pass is wanted.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from tesseradb import grammar
from tesseradb.catalog.values import bind, plain
from tesseradb.grammar import ast

SIZE = 256


@dataclass
class ReusablePlan:
    """What a SELECT's plan needs from each execute: its parameters, bound by the same names."""
    expr: exp.Expression                     # the parsed tree (for the error path of binding)
    sql: str                                 # the SQLite SQL (parameters by name)
    names: list[str] = field(default_factory=list)
    positional: bool = True
    remake_knn: Any = None                   # (db, bound) -> KnnRequest, for a knn() query
    remake_prepare: Any = None               # (db, bound) -> the step run before the SQL (hybrid search)
    direct: Any = None                       # search/knn_direct.Direct (hybrid_direct.HybridDirect), when one

    def bind(self, params: Any) -> dict[str, Any]:
        """The parameter dict for this execute; an error exactly as a fresh ``bind`` raises it."""
        if self.positional and type(params) in _SEQUENCES and len(params) == len(self.names):
            return dict(zip(self.names, map(plain, params)))       # no comprehension's frame
        if self.positional and params is not None and not isinstance(params, Mapping) and len(params) == len(self.names):
            return {name: plain(value) for name, value in zip(self.names, params)}
        if not self.positional and isinstance(params, Mapping) and all(n in params for n in self.names):
            return {name: plain(params[name]) for name in self.names}
        if not self.names and not params:
            return {}
        return bind(self.expr, params)[1]


_SEQUENCES = (tuple, list)     # what drivers pass: no ABC check (Mapping's isinstance) needed for them


DERIVED_PREFIX = "_tessera_"      # bound names the planner adds; a cached plan would lack them


def reusable(expr: exp.Expression, planned: Any) -> ReusablePlan | None:
    """A ReusablePlan of ``planned`` (select_plan.Planned), or None when it depends on the values."""
    remake_prepare = getattr(planned.prepare, "remake", None)    # hybrid search: its sides for new parameters
    if (planned.prepare is not None and remake_prepare is None) or (planned.knn is not None and planned.remake_knn is None):
        return None
    if any(name.startswith(DERIVED_PREFIX) for name in planned.bound):
        return None     # values the planner derived from the statement's (full-text queries, snippet options)
    holders = list(expr.find_all(exp.Placeholder))
    positional = any(not h.this for h in holders)
    names = [f"p{i}" for i in range(1, len(holders) + 1)] if positional else \
        list(dict.fromkeys(str(h.this) for h in holders))
    return ReusablePlan(expr, planned.sql, names, positional, planned.remake_knn, remake_prepare, planned.direct)


class StatementCache:
    def __init__(self, size: int = SIZE) -> None:
        self.size = size
        self._parsed: OrderedDict[str, ast.Statement] = OrderedDict()
        self._plans: dict[int, tuple[exp.Expression, ReusablePlan]] = {}
        self._hidden_ok: dict[int, ast.Statement] = {}     # cached statements that name no engine table
        self._no_session: dict[int, ast.Statement] = {}    # cached statements that want no session pass
        self.hits = self.misses = 0

    def parse(self, sql: str) -> ast.Statement:
        stmt = self._parsed.get(sql)
        if stmt is not None:
            self._parsed.move_to_end(sql)
            self.hits += 1
            return stmt
        self.misses += 1
        stmt = grammar.parse(sql)
        if isinstance(stmt, ast.Query) and stmt.kind == "select":
            self._parsed[sql] = stmt
            if len(self._parsed) > self.size:
                _, old = self._parsed.popitem(last=False)
                self._plans.pop(id(old.expr), None)
                self._hidden_ok.pop(id(old), None)
                self._no_session.pop(id(old), None)
        return stmt

    def names_no_hidden_table(self, stmt: ast.Statement, check) -> None:
        """``check(stmt)`` (mysql/hidden.py: it raises when the statement names an engine table), once per
        statement this cache holds: a cached statement's tree never changes, so neither does the answer."""
        if self._hidden_ok.get(id(stmt)) is stmt:
            return
        check(stmt)
        if any(s is stmt for s in self._parsed.values()):
            self._hidden_ok[id(stmt)] = stmt

    def wants_no_session_pass(self, stmt: ast.Statement) -> bool:
        return self._no_session.get(id(stmt)) is stmt

    def note_no_session_pass(self, stmt: ast.Statement) -> None:
        """``stmt`` wanted no session pass with the current catalog (kept only for a statement this cache holds)."""
        if self._no_session.get(id(stmt)) is not stmt and any(s is stmt for s in self._parsed.values()):
            self._no_session[id(stmt)] = stmt

    def plan_for(self, expr: exp.Expression) -> ReusablePlan | None:
        entry = self._plans.get(id(expr))
        return entry[1] if entry is not None and entry[0] is expr else None

    def keep_plan(self, expr: exp.Expression, plan: ReusablePlan | None) -> None:
        """Keep ``plan`` for a tree this cache parsed (any other tree is transient: not kept)."""
        if plan is not None and any(s.expr is expr for s in self._parsed.values()):
            self._plans[id(expr)] = (expr, plan)

    def clear_plans(self) -> None:
        self._plans.clear()
        self._no_session.clear()
