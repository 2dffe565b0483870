"""Comparisons with dates that would otherwise be silently wrong (issue 22).

Manticore's ``timestamp`` holds Unix seconds; compared with a date string or a Python date/datetime
(bound as ISO text) SQLite would compare an integer with text and answer "never". Here the other side
is converted first: a literal becomes its Unix seconds (UTC) while the statement is prepared, a
parameter through ``_tessera_timestamp_of(?)``. A DATETIME column compared with a date literal
(``created_at = '2024-01-01'``) compares with its full form (``2024-01-01 00:00:00``), as MySQL does. A
string that is no date is ``ERROR 1292 Incorrect datetime value``, never an empty result.
"""
from __future__ import annotations


from sqlglot import exp

from tesseradb.catalog.tables import Table
from tesseradb.catalog.date_functions import DATETIME_OF, TIMESTAMP_OF, unix_seconds
from tesseradb.catalog.temporal_values import datetime_text
from tesseradb.sql.mysql.scope import table_scope

COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ)
KINDS = ("timestamp", "datetime")


def needed(tables: dict[str, Table], names: frozenset[str]) -> bool:
    return any(c.type in KINDS for n in names if n in tables for c in tables[n].columns)


def _column_type(scope: dict[str, Table], node: exp.Expression) -> str | None:
    if not isinstance(node, exp.Column):
        return None
    owners = [scope[node.table.lower()]] if node.table and node.table.lower() in scope else \
        ([] if node.table else list({id(t): t for t in scope.values()}.values()))
    for table in owners:
        col = table.column(node.name)
        if col is not None:
            return col.type
    return None


def _converted(kind: str, node: exp.Expression) -> exp.Expression | None:
    if isinstance(node, exp.Literal) and node.is_string:
        if kind == "timestamp":
            return exp.Literal.number(unix_seconds(node.this))
        return exp.Literal.string(datetime_text(node.this))
    if isinstance(node, exp.Placeholder):
        return exp.Anonymous(this=TIMESTAMP_OF if kind == "timestamp" else DATETIME_OF, expressions=[node.copy()])
    return None


def _assignment(node: exp.Expression) -> bool:
    """``SET col = value`` (UPDATE, ON DUPLICATE KEY UPDATE) is a write, not a comparison."""
    return isinstance(node, exp.EQ) and node.arg_key == "expressions" and \
        isinstance(node.parent, (exp.Update, exp.OnConflict, exp.Set))


def _sides(node: exp.Expression) -> list[tuple[exp.Expression, list[exp.Expression]]]:
    if _assignment(node):
        return []
    if isinstance(node, COMPARISONS):
        return [(node.this, [node.expression]), (node.expression, [node.this])]
    if isinstance(node, exp.Between):
        return [(node.this, [node.args["low"], node.args["high"]])]
    if isinstance(node, exp.In):
        return [(node.this, list(node.expressions))]
    return []


def rewrite(tables: dict[str, Table], expr: exp.Expression) -> exp.Expression:
    """The statement with dates compared to timestamp / datetime columns converted (a copy)."""
    expr = expr.copy()
    scope = table_scope(tables, expr)
    for node in list(expr.find_all(*COMPARISONS, exp.Between, exp.In)):
        for column, others in _sides(node):
            kind = _column_type(scope, column)
            if kind not in KINDS:
                continue
            for other in others:
                new = _converted(kind, other)
                if new is not None:
                    other.replace(new)
    return expr
