"""MySQL's ONLY_FULL_GROUP_BY (on in the default sql_mode): a selected column that is neither grouped
nor aggregated is an error (1055), and so is a bare column next to an aggregate without GROUP BY (1140).
SQLite would return a value from an arbitrary row instead, which is what MySQL does when the mode is
switched off (``SET sql_mode = ''``)."""
from __future__ import annotations

from sqlglot import exp

from tesseradb import errors
from tesseradb.errors import UserError
from tesseradb.sql.mysql import variables
from tesseradb.sql.database import Database

MODE = "ONLY_FULL_GROUP_BY"


def _bare_columns(node: exp.Expression) -> list[exp.Column]:
    """Columns of ``node`` outside aggregates and subqueries."""
    out: list[exp.Column] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (exp.AggFunc, exp.Subquery, exp.Window)):
            continue
        if isinstance(current, exp.Column):
            out.append(current)
            continue
        stack.extend(current.iter_expressions())
    return out


def _aggregates(node: exp.Expression) -> bool:
    """An aggregate of this SELECT (not one inside a subquery or a window)."""
    if isinstance(node, (exp.Subquery, exp.Window)):
        return False
    if isinstance(node, exp.AggFunc):
        return True
    return any(_aggregates(child) for child in node.iter_expressions())


def _has_aggregate(select: exp.Select) -> bool:
    return any(_aggregates(p) for p in select.expressions)


def _group_keys(select: exp.Select) -> tuple[set[str], set[str]]:
    """The grouped expressions (as SQL) and grouped column names; positions and aliases resolved."""
    projections = select.expressions
    aliases = {p.alias.lower(): p.this for p in projections if isinstance(p, exp.Alias)}
    texts, names = set(), set()
    for key in select.args["group"].expressions:
        if isinstance(key, exp.Literal) and not key.is_string and 0 < int(key.this) <= len(projections):
            key = projections[int(key.this) - 1].unalias()
        elif isinstance(key, exp.Column) and not key.table and key.name.lower() in aliases:
            key = aliases[key.name.lower()]
        texts.add(key.sql())
        if isinstance(key, exp.Column):
            names.add(key.name.lower())
    return texts, names


def _name(column: exp.Column, select: exp.Select, database: str) -> str:
    table = column.table
    if not table:
        tables = [t for t in select.find_all(exp.Table) if t.find_ancestor(exp.Select) is select]
        table = tables[0].name if len(tables) == 1 else ""
    return ".".join(p for p in (database, table, column.name) if p)


def _check_select(select: exp.Select, database: str) -> None:
    group = select.args.get("group")
    if group is None:
        if not _has_aggregate(select):
            return
        for n, p in enumerate(select.expressions, start=1):
            bare = _bare_columns(p)
            if bare:
                raise UserError(f"In aggregated query without GROUP BY, expression #{n} of SELECT list contains "
                                f"nonaggregated column '{_name(bare[0], select, database)}'; this is incompatible with "
                                "sql_mode=only_full_group_by", errors.MixedAggregate)
        return
    texts, names = _group_keys(select)
    if "id" in names:
        return                         # grouped by the primary key: every column depends on it
    for n, p in enumerate(select.expressions, start=1):
        if p.unalias().sql() in texts:
            continue
        for column in _bare_columns(p.unalias()):
            if column.name.lower() not in names and column.sql() not in texts:
                raise UserError(f"Expression #{n} of SELECT list is not in GROUP BY clause and contains "
                                f"nonaggregated column '{_name(column, select, database)}' which is not functionally "
                                "dependent on columns in GROUP BY clause; this is incompatible with "
                                "sql_mode=only_full_group_by", errors.NotGrouped)


def check(db: Database, expr: exp.Expression) -> None:
    if MODE not in str(variables.session(db).system.get("sql_mode", "")).upper():
        return
    for select in expr.find_all(exp.Select):
        _check_select(select, variables.database_name(db))
