"""Where MySQL and SQLite answer the same SQL differently, rewrite the tree so SQLite gives MySQL's
answer (tests/sql/mysql_semantics.test). Columns of text types compare without case through their
collation (engine/sql/mysql/constraints.py); this module covers what a column cannot: literals.

- ``'a' = 'A'`` between two string literals compares without case (MySQL's utf8mb4_0900_ai_ci).
- ``'10' = 10``: a string literal compared with a number is read as a number (MySQL casts to DOUBLE).
"""
from __future__ import annotations

from sqlglot import exp

COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ, exp.NullSafeNEQ)


def _string(node: exp.Expression) -> bool:
    return isinstance(node, exp.Literal) and node.is_string


def _number(node: exp.Expression) -> bool:
    if isinstance(node, exp.Neg):
        node = node.this
    return isinstance(node, exp.Literal) and not node.is_string


def _rewrite(node: exp.Expression) -> bool:
    """Rewrite one comparison in place; True when it changed."""
    left, right = node.this, node.expression
    if _string(left) and _string(right):
        node.set("expression", exp.Collate(this=right.copy(), expression=exp.Var(this="NOCASE")))
        return True
    for side, other in (("this", right), ("expression", left)):
        value = node.args[side]
        if _string(value) and _number(other):
            node.set(side, exp.Cast(this=value.copy(), to=exp.DataType.build("DOUBLE")))
            return True
    return False


def _keep_names(expr: exp.Expression) -> None:
    """Projections that will be rewritten keep the name MySQL gives them (the expression as written)."""
    for select in expr.find_all(exp.Select):
        select.set("expressions", [
            exp.alias_(p, p.sql(dialect="mysql", normalize_functions=False), quoted=True)
            if not isinstance(p, (exp.Alias, exp.Column, exp.Star)) and any(
                isinstance(n, COMPARISONS) for n in p.walk()) else p
            for p in select.expressions])


def apply(expr: exp.Expression) -> exp.Expression:
    comparisons = [n for n in expr.find_all(*COMPARISONS)]
    if not comparisons:
        return expr
    _keep_names(expr)
    for node in expr.find_all(*COMPARISONS):
        _rewrite(node)
    return expr
