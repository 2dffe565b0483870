"""Which catalog table each name in a statement refers to (table names and aliases)."""
from __future__ import annotations

from sqlglot import exp

from tesseradb.catalog.tables import Table


def table_scope(tables: dict[str, Table], expr: exp.Expression) -> dict[str, Table]:
    """Qualifier (table name or alias, lower case) -> catalog table, for the tables a statement names."""
    out: dict[str, Table] = {}
    for node in expr.find_all(exp.Table):
        table = tables.get(node.name.lower())
        if table is not None:
            out[node.name.lower()] = table
            if node.alias:
                out[node.alias.lower()] = table
    return out
