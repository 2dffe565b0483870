"""Manticore spellings the grammar accepts and turns into our own forms.

- ``string attribute indexed``, ``text indexed``, ``text stored`` ...: Manticore's text/string
  properties. With ``indexed`` the column is a full-text field (our ``text``); without it, a plain
  attribute (our ``string``). The words stay in the column's type text, so SHOW CREATE TABLE prints
  them as written.
- ``@knn_dist``: Manticore's name of the distance column. In the select list it becomes
  ``knn_dist() AS `@knn_dist```; in WHERE, ORDER BY and elsewhere plain ``knn_dist()``.
"""
from __future__ import annotations

from sqlglot import exp

from .errors import GrammarError

FIELD_FLAGS = ("attribute", "indexed", "stored")
#: the property that makes a text/string column a full-text field -> its type; otherwise the other
FLAGGED_TYPE = {True: "text", False: "string"}
KNN_DIST_NAME = "@knn_dist"


def flagged_type(canonical: str, flags: list[str]) -> str:
    """The column type of ``text|string [attribute|stored] [indexed]``."""
    if not flags:
        return canonical
    if canonical not in FLAGGED_TYPE.values():
        raise GrammarError(f"column properties {', '.join(FIELD_FLAGS)} apply only to text and string columns "
                           f"(got '{flags[0]}')")
    return FLAGGED_TYPE["indexed" in flags]


def _is_knn_dist_variable(node: exp.Expression) -> bool:
    return isinstance(node, exp.Parameter) and node.name.lower() == "knn_dist"


def _knn_dist_call() -> exp.Anonymous:
    call = exp.Anonymous(this="knn_dist", expressions=[])
    call.meta["spelling"] = KNN_DIST_NAME
    return call


def rewrite_knn_dist(expr: exp.Expression) -> exp.Expression:
    """Replace every ``@knn_dist`` with ``knn_dist()`` (named ``@knn_dist`` in the select list)."""
    for select in list(expr.find_all(exp.Select)):
        projections = [exp.alias_(_knn_dist_call(), KNN_DIST_NAME, quoted=True)
                       if _is_knn_dist_variable(p) else p for p in select.expressions]
        select.set("expressions", projections)
    for node in list(expr.find_all(exp.Parameter)):
        if _is_knn_dist_variable(node):
            node.replace(_knn_dist_call())
    return expr
