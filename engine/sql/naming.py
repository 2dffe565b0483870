"""How a result column computed by an expression is named: as the user wrote it, in MySQL's spelling
(``COUNT(*)``, ``knn_dist()``, ``DATABASE()``, ``1/3``), as MySQL names it, not after the SQL that a
rewrite generates for SQLite. The one place for it: queries, views and the passes that replace
expressions all call :func:`name_as_written`."""
from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp


def written(node: exp.Expression) -> str:
    """The expression's text as written (grammar/written_names.py, issue 22), else in MySQL spelling
    (sqlglot reads DATABASE() and SCHEMA() as one node: DATABASE())."""
    if node.meta.get("written"):
        return str(node.meta["written"])
    text = node.sql(dialect="mysql", normalize_functions=False)
    return text.replace("SCHEMA()", "DATABASE()") if node.find(exp.CurrentSchema) is not None else text


def name_as_written(expr: exp.Expression, changes: Callable[[exp.Expression], bool] | None = None,
                    nested: bool = True) -> exp.Expression:
    """Alias every computed projection (not a column, a star or already aliased) by its written text;
    only those ``changes`` picks when given; in every SELECT of the tree, or the outer one only."""
    selects = list(expr.find_all(exp.Select)) if nested else [expr] if isinstance(expr, exp.Select) else []
    for select in selects:
        select.set("expressions", [
            exp.alias_(p, written(p), quoted=True)
            if not isinstance(p, (exp.Alias, exp.Column, exp.Star)) and (changes is None or changes(p)) else p
            for p in select.expressions])
    return expr
