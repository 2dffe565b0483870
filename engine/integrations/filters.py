"""Metadata filters as bound WHERE conditions: never SQL text made from a key or a value.

Both frameworks' filters become one small tree (``Cond``, ``AllOf``, ``AnyOf``, ``NoneOf``), which
``compile_filter`` turns into a condition string made only of fixed SQL, column names the table's
layout has checked, and ``?`` placeholders, plus the list of values those placeholders take.

A metadata key is either a column of the table (``columns``: key -> checked column name) or a key of
the json metadata column, read with SQLite's ``json_each`` (the key itself is a bound value, so any
string works as a key, quotes, dots and all). Comparisons are typed, as in Python: a string matches
strings, a number matches numbers, ``True`` matches ``true``. A key that a document lacks matches only
the negative operators (``ne``, ``nin``, ``is_empty``), as in LlamaIndex's own filter function and
MongoDB's ``$ne``.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Union

from .layout import identifier

# operator -> SQL comparison for scalars
COMPARISONS = {"eq": "=", "ne": "=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
LIST_OPERATORS = ("in", "nin", "any", "all")
TEXT_OPERATORS = ("text_match", "text_match_insensitive")
OPERATORS = (*COMPARISONS, *LIST_OPERATORS, *TEXT_OPERATORS, "contains", "is_empty")
NEGATIVE = ("ne", "nin")           # true for a document without the key


@dataclass(frozen=True)
class Cond:
    key: str
    op: str
    value: Any = None
    column: str | None = None      # a role column of the store (checked identifier), not a metadata key


@dataclass(frozen=True)
class AllOf:
    parts: list["Filter"] = field(default_factory=list)


@dataclass(frozen=True)
class AnyOf:
    parts: list["Filter"] = field(default_factory=list)


@dataclass(frozen=True)
class NoneOf:
    parts: list["Filter"] = field(default_factory=list)


Filter = Union[Cond, AllOf, AnyOf, NoneOf]


class FilterError(ValueError):
    """A filter that cannot be applied (an unknown operator, a value of the wrong kind)."""


# -- LangChain's dict form --------------------------------------------------------------------------
DICT_OPERATORS = {f"${op}": op for op in ("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin")}


def from_dict(spec: Mapping[str, Any] | None) -> Filter | None:
    """``{"year": {"$gte": 2020}, "$or": [{"tag": "a"}, {"tag": {"$in": ["b", "c"]}}]}`` -> a tree.
    Several keys at one level are ANDed; ``{"k": v}`` is ``$eq``."""
    if spec is None:
        return None
    if not isinstance(spec, Mapping):
        raise FilterError(f"a filter is a dict, not {type(spec).__name__}")
    parts = [_dict_item(key, value) for key, value in spec.items()]
    return parts[0] if len(parts) == 1 else AllOf(parts)


def _dict_item(key: Any, value: Any) -> Filter:
    if not isinstance(key, str):
        raise FilterError(f"a filter key must be a string, not {key!r}")
    if key in ("$and", "$or"):
        if not isinstance(value, (list, tuple)) or not value:
            raise FilterError(f"{key} takes a non-empty list of filters")
        parts = [from_dict(part) for part in value]
        return AllOf(parts) if key == "$and" else AnyOf(parts)
    if key.startswith("$"):
        raise FilterError(f"unknown filter operator {key!r} at the top level (expected $and or $or)")
    if isinstance(value, Mapping):
        if not value:
            raise FilterError(f"empty condition for key {key!r}")
        conds = []
        for op, operand in value.items():
            if op not in DICT_OPERATORS:
                raise FilterError(f"unknown filter operator {op!r} for key {key!r}; expected one of "
                                  f"{', '.join(DICT_OPERATORS)}")
            conds.append(Cond(key, DICT_OPERATORS[op], operand))
        return conds[0] if len(conds) == 1 else AllOf(conds)
    return Cond(key, "eq", value)


# -- compiling --------------------------------------------------------------------------------------
def compile_filter(tree: Filter | None, columns: Mapping[str, str], json_column: str,
                   table: str) -> tuple[str | None, list[Any]]:
    """(condition, values) for ``tree``; (None, []) without a filter. ``columns`` maps metadata keys
    to quoted column names; other keys live in ``json_column`` (quoted, qualified by ``table``)."""
    if tree is None:
        return None, []
    params: list[Any] = []
    return _node(tree, _Target(columns, f"{table}.{json_column}", table), params), params


@dataclass
class _Target:
    columns: Mapping[str, str]
    json: str
    table: str


def _node(tree: Filter, target: _Target, params: list[Any]) -> str:
    if isinstance(tree, Cond):
        return _cond(tree, target, params)
    parts = [_node(p, target, params) for p in tree.parts]
    if not parts:
        return {AllOf: "1 = 1", AnyOf: "1 = 0", NoneOf: "1 = 1"}[type(tree)]
    if isinstance(tree, NoneOf):
        return "NOT (" + " OR ".join(parts) + ")"
    joiner = " AND " if isinstance(tree, AllOf) else " OR "
    return "(" + joiner.join(parts) + ")"


def _cond(cond: Cond, target: _Target, params: list[Any]) -> str:
    if cond.op not in OPERATORS:
        raise FilterError(f"unknown filter operator {cond.op!r}")
    _check_operand(cond)
    column = f"{target.table}.{identifier(cond.column)}" if cond.column is not None else target.columns.get(cond.key)
    if column is not None:
        return _column_cond(column, cond, params)
    return _json_cond(target.json, cond, params)


def _check_operand(cond: Cond) -> None:
    if cond.op in LIST_OPERATORS:
        if not isinstance(cond.value, (list, tuple, set, frozenset)):
            raise FilterError(f"{cond.op} on {cond.key!r} takes a list of values, not {cond.value!r}")
        for v in cond.value:
            _scalar(cond, v)
    elif cond.op in TEXT_OPERATORS:
        if not isinstance(cond.value, str):
            raise FilterError(f"{cond.op} on {cond.key!r} takes a string, not {cond.value!r}")
    elif cond.op in ("gt", "gte", "lt", "lte"):
        if isinstance(cond.value, bool) or not isinstance(cond.value, (int, float, str)):
            raise FilterError(f"{cond.op} on {cond.key!r} takes a number or a string, not {cond.value!r}")
    elif cond.op != "is_empty":
        _scalar(cond, cond.value)


def _scalar(cond: Cond, value: Any) -> None:
    if value is not None and not isinstance(value, (str, int, float, bool)):
        raise FilterError(f"{cond.op} on {cond.key!r}: a value must be a string, number, bool or None, "
                          f"not {type(value).__name__}")


# -- a key that is a column -------------------------------------------------------------------------
def _column_cond(column: str, cond: Cond, params: list[Any]) -> str:
    op, value = cond.op, cond.value
    if op in ("eq", "ne"):
        if value is None:
            return f"{column} IS {'NOT ' if op == 'ne' else ''}NULL"
        params.append(value)
        return f"{column} = ?" if op == "eq" else f"({column} IS NULL OR {column} <> ?)"
    if op in COMPARISONS:
        params.append(value)
        return f"{column} {COMPARISONS[op]} ?"
    if op in ("in", "nin"):
        values = [v for v in value if v is not None]
        params.extend(values)
        inside = f"{column} IN ({', '.join('?' * len(values))})" if values else "1 = 0"
        return inside if op == "in" else f"({column} IS NULL OR NOT {inside})"
    if op in TEXT_OPERATORS:
        return _text_match(column, op, value, params)
    if op == "is_empty":
        return f"({column} IS NULL OR {column} = '')"
    raise FilterError(f"{op} on {cond.key!r}: the key is the column {column}, which holds no list")


def _text_match(expr: str, op: str, value: str, params: list[Any]) -> str:
    if op == "text_match":
        params.append(value)
        return f"INSTR({expr}, ?) > 0"
    params.append(value.lower())
    return f"INSTR(LOWER({expr}), ?) > 0"


# -- a key of the json column -----------------------------------------------------------------------
def _json_cond(json: str, cond: Cond, params: list[Any]) -> str:
    op, value = cond.op, cond.value
    if op == "is_empty":
        params.append(cond.key)
        return (f"NOT EXISTS (SELECT 1 FROM json_each({json}) AS _j WHERE _j.key = ? AND _j.type <> 'null' "
                "AND NOT (_j.type = 'array' AND _j.value = '[]') AND NOT (_j.type = 'text' AND _j.value = ''))")
    if op in ("contains", "any", "all"):
        values = [value] if op == "contains" else list(value)
        parts = [_element(json, cond.key, v, params) for v in values]
        if not parts:
            return "1 = 0" if op == "any" else "1 = 1"
        return "(" + (" OR " if op == "any" else " AND ").join(parts) + ")"
    params.append(cond.key)
    if op in TEXT_OPERATORS:
        return (f"EXISTS (SELECT 1 FROM json_each({json}) AS _j WHERE _j.key = ? AND _j.type = 'text' AND "
                f"{_text_match('_j.value', op, value, params)})")
    if op in ("eq", "ne", "in", "nin"):
        values = [value] if op in ("eq", "ne") else list(value)
        test = " OR ".join(_typed("_j", "=", v, params) for v in values) or "1 = 0"
        found = f"EXISTS (SELECT 1 FROM json_each({json}) AS _j WHERE _j.key = ? AND ({test}))"
        return f"NOT {found}" if op in NEGATIVE else found
    return (f"EXISTS (SELECT 1 FROM json_each({json}) AS _j WHERE _j.key = ? AND "
            f"{_typed('_j', COMPARISONS[op], value, params)})")


def _element(json: str, key: str, value: Any, params: list[Any]) -> str:
    """The key holds a JSON array with an element equal to ``value``."""
    params.append(key)
    return (f"EXISTS (SELECT 1 FROM json_each({json}) AS _j, json_each(_j.value) AS _e WHERE _j.key = ? "
            f"AND _j.type = 'array' AND {_typed('_e', '=', value, params)})")


def _typed(alias: str, comparison: str, value: Any, params: list[Any]) -> str:
    """``alias`` (a json_each row) compared with ``value`` only when both are of the same kind."""
    if value is None:
        return f"{alias}.type = 'null'"
    if isinstance(value, bool):
        return f"{alias}.type = '{'true' if value else 'false'}'"
    params.append(value)
    kind = "'text'" if isinstance(value, str) else "'integer', 'real'"
    return f"({alias}.type IN ({kind}) AND {alias}.value {comparison} ?)"

