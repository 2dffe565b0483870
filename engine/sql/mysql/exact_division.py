"""MySQL's exact division: ``/`` between exact values (integers, decimal literals, integer columns) gives
a DECIMAL with 4 more digits after the point than the dividend (``div_precision_increment``), so
``1/3`` is ``0.3333`` and ``AVG`` of an integer column has 4 decimals. SQLite computes the double;
rounding it to the same scale gives MySQL's value. Divisions involving a FLOAT/DOUBLE operand stay
doubles, as in MySQL."""
from __future__ import annotations

from sqlglot import exp

from tesseradb.catalog.tables import Table
from tesseradb.sql.mysql.scope import table_scope

INCREMENT = 4                                  # MySQL's div_precision_increment default
EXACT_TYPES = {"int", "bigint", "bool", "timestamp"}




def _column_type(column: exp.Column, scope: dict[str, Table]) -> str | None:
    candidates = [scope[column.table.lower()]] if column.table and column.table.lower() in scope else (
        [] if column.table else list({id(t): t for t in scope.values()}.values()))
    types = {c.type for t in candidates if (c := t.column(column.name)) is not None}
    if column.name.lower() == "id" and not types:
        types = {"bigint"}
    return types.pop() if len(types) == 1 else None


def scale(node: exp.Expression, scope: dict[str, Table]) -> int | None:
    """Digits after the point of an exact value; None when the value is approximate or unknown."""
    if isinstance(node, exp.Paren):
        return scale(node.this, scope)
    if isinstance(node, exp.Neg):
        return scale(node.this, scope)
    if isinstance(node, exp.Literal) and not node.is_string:
        text = node.this.lower()
        if "e" in text:
            return None
        return len(text.split(".")[1]) if "." in text else 0
    if isinstance(node, exp.Column):
        return 0 if _column_type(node, scope) in EXACT_TYPES else None
    if isinstance(node, (exp.Add, exp.Sub)):
        left, right = scale(node.this, scope), scale(node.expression, scope)
        return None if left is None or right is None else max(left, right)
    if isinstance(node, exp.Mul):
        left, right = scale(node.this, scope), scale(node.expression, scope)
        return None if left is None or right is None else left + right
    if isinstance(node, (exp.IntDiv, exp.Count)):
        return 0
    if isinstance(node, exp.Sum):
        return scale(node.this, scope)
    return None


def _rounded(node: exp.Expression, digits: int) -> exp.Expression:
    return exp.Round(this=node, decimals=exp.Literal.number(digits))


def apply(tables: dict[str, Table], expr: exp.Expression) -> exp.Expression:
    """Round exact divisions and AVG of exact values to MySQL's scale (in place; returns ``expr``)."""
    scope = table_scope(tables, expr)

    def visit(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Div):
            left, right = scale(node.this, scope), scale(node.expression, scope)
            if left is not None and right is not None:
                return _rounded(node, left + INCREMENT)
        elif isinstance(node, exp.Avg):
            inner = scale(node.this, scope)
            if inner is not None:
                return _rounded(node, inner + INCREMENT)
        return node
    return expr.transform(visit, copy=False)
