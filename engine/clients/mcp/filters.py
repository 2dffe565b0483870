"""``filters={column: value | {op: value}}`` -> one SQL condition with ``?`` parameters.

Column names are looked up in the table's catalog (an unknown one is an error naming the columns
that exist) and written as the catalog spells them; values are only ever bound parameters."""
from __future__ import annotations

from typing import Any

from tesseradb.clients.mcp.schema import TableInfo, quote
from tesseradb.clients.mcp.limits import MAX_FILTERS, MAX_IN_VALUES

Scalar = (str, int, float, bool)


class FilterError(ValueError):
    """A filter an agent sent that cannot be applied; the message says why."""


def _compare(op: str):
    return lambda col, value: (f"{col} {op} ?", [_scalar(value)])


def _in(negated: bool):
    def build(col: str, value: Any) -> tuple[str, list]:
        if not isinstance(value, list) or not value:
            raise FilterError(f"'{'not_in' if negated else 'in'}' takes a non-empty list of values")
        if len(value) > MAX_IN_VALUES:
            raise FilterError(f"an 'in' list holds at most {MAX_IN_VALUES} values")
        marks = ", ".join("?" * len(value))
        return f"{col} {'NOT IN' if negated else 'IN'} ({marks})", [_scalar(v) for v in value]
    return build


def _eq(col: str, value: Any) -> tuple[str, list]:
    return (f"{col} IS NULL", []) if value is None else (f"{col} = ?", [_scalar(value)])


def _ne(col: str, value: Any) -> tuple[str, list]:
    return (f"{col} IS NOT NULL", []) if value is None else (f"{col} <> ?", [_scalar(value)])


OPERATORS = {
    "eq": _eq, "ne": _ne,
    "lt": _compare("<"), "lte": _compare("<="), "gt": _compare(">"), "gte": _compare(">="),
    "in": _in(False), "not_in": _in(True), "nin": _in(True),
    "like": _compare("LIKE"),
}
SYMBOLS = {"=": "eq", "==": "eq", "!=": "ne", "<>": "ne", "<": "lt", "<=": "lte", ">": "gt", ">=": "gte"}


def _scalar(value: Any) -> Any:
    if isinstance(value, Scalar):
        return value
    raise FilterError(f"a filter value must be a string, number or boolean, not {type(value).__name__}")


def _operator(name: Any):
    key = str(name).lstrip("$").lower() if isinstance(name, str) else None
    key = SYMBOLS.get(key, key)
    if key not in OPERATORS:
        raise FilterError(f"unknown filter operator {name!r}: use one of {', '.join(sorted(OPERATORS))}")
    return OPERATORS[key]


def build(table: TableInfo, filters: dict[str, Any] | None) -> tuple[str, list]:
    """(`` AND ...`` condition text or "", parameters)."""
    if not filters:
        return "", []
    if not isinstance(filters, dict):
        raise FilterError("filters must be an object {column: value | {operator: value}}")
    if len(filters) > MAX_FILTERS:
        raise FilterError(f"at most {MAX_FILTERS} filters")
    parts, params = [], []
    for name, condition in filters.items():
        column = table.column(name)
        key = None if column is not None and column.filterable else _json_key(table, name)
        if key is None and (column is None or not column.filterable):
            known = ", ".join([c.name for c in table.columns if c.filterable]
                              + [f"{c.name}.<key>" for c in table.json_columns])
            raise FilterError(f"table '{table.name}' has no filterable column {name!r} (it has: {known})")
        pairs = condition.items() if isinstance(condition, dict) else [("eq", condition)]
        if not pairs:
            raise FilterError(f"the filter on {name} is empty")
        for op, value in pairs:
            if key is not None:
                sql, values = _json_condition(key, _operator(op), value)
            else:
                sql, values = _operator(op)(quote(column.name), value)
            parts.append(sql)
            params.extend(values)
    return " AND " + " AND ".join(parts), params


# -- front matter: keys of a json column ---------------------------------------------------------------
def _json_key(table: TableInfo, name: Any) -> tuple[str, str] | None:
    """``meta.owner`` -> (meta, owner); a bare ``tags`` -> (the table's one json column, tags)."""
    if not isinstance(name, str) or not name:
        return None
    head, dot, rest = name.partition(".")
    column = table.column(head) if dot else None
    if column is not None and column.type == "json" and rest:
        return column.name, rest
    if table.column(name) is None and len(table.json_columns) == 1:
        return table.json_columns[0].name, name
    return None


def _json_condition(key: tuple[str, str], build, value: Any) -> tuple[str, list]:
    """The key's value (or, for a list, any of its elements) meets the condition ``build`` makes of a
    column; a document without the key meets only ne / not_in. Dates are ISO text: ranges compare them."""
    column, name = key
    test, values = build("_v.value", value)
    negated = test.startswith("_v.value <>") or " NOT IN " in test or test.endswith("IS NOT NULL")
    if negated:         # "not equal": no value (nor element) of the key is equal
        test, values = (build("_v.value", value)[0].replace("<>", "=").replace(" NOT IN ", " IN ")
                        .replace("IS NOT NULL", "IS NULL"), values)
    found = (f"EXISTS (SELECT 1 FROM json_each({quote(column)}) AS _j, json_each(CASE WHEN _j.type = 'array' "
             f"THEN _j.value ELSE json_array(_j.value) END) AS _v WHERE _j.key = ? AND {test})")
    return (f"NOT {found}" if negated else found), [name, *values]
