"""The arguments of ``knn(col, [k,] query [, {options}])`` with Manticore's meaning and validation.

Read from Manticore's ``searchdsql.cpp`` (ParseKNNOption, SetKNN) and ``knnmisc.cpp`` (SetupKNNLimit):

- ``k`` may be left out: it then comes from ``LIMIT`` + ``OFFSET`` of the query, or, without a LIMIT,
  from Manticore's default LIMIT of 20 (Manticore also caps it at max_matches, 1000 by default).
  ``{k=N}`` in the options overrides the positional k, as in Manticore.
- Options, names case-insensitive: ``ef`` (integer >= 0), ``rescore`` / ``prefilter`` / ``fullscan`` /
  ``early_termination`` (integers, non-zero = on), ``oversampling`` (a number >= 1.0), ``k`` (integer
  > 0). Anything else, or a value of the wrong kind, is Manticore's ``Unable to parse KNN option 'x'``.
  One difference on purpose: Manticore wants ``oversampling`` written as a float literal and rejects
  ``oversampling=3``; here any number >= 1 is accepted (a superset: every Manticore query runs).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlglot import exp

from tesseradb.catalog.values import literal
from tesseradb import errors
from tesseradb.errors import UserError

#: Manticore's LIMIT when a query has none (CSphQuery::m_iLimit) and its max_matches default.
MANTICORE_DEFAULT_LIMIT = 20
MANTICORE_MAX_MATCHES = 1000


@dataclass(frozen=True)
class KnnOptions:
    ef: int | None = None              # HNSW search breadth; None = the index default
    rescore: bool = True               # with quantization: recompute distances from float32 vectors
    oversampling: float | None = None  # candidates = k * oversampling; None: 3.0 on quantized columns
                                       # (Manticore's default), 1.0 on float32 ones (their distances are exact)
    prefilter: bool = True             # apply WHERE before choosing the k nearest (else after)
    fullscan: bool = False             # exact search over every (allowed) vector, no HNSW
    early_termination: bool = True     # accepted; FAISS HNSW has no such switch
    k: int | None = None               # {k=N}: overrides the positional k
    mmr: float | None = None           # {mmr=λ}: diversity in [0, 1] (vectors/knn_rank.py)
    mmr_candidates: int | None = None  # candidates for mmr / length_penalty; None: max(4k, 50)
    length_penalty: float | None = None  # {length_penalty=α}: similarity / (1 + α ln(chunks))


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return _is_int(value) or isinstance(value, (float, np.floating))


# option -> (accepts the value?, converts it)
_OPTIONS = {
    "ef": (lambda v: _is_int(v) and v >= 0, int),
    "rescore": (_is_int, bool),
    "prefilter": (_is_int, bool),
    "fullscan": (_is_int, bool),
    "early_termination": (_is_int, bool),
    "oversampling": (lambda v: _is_number(v) and v >= 1.0, float),
    "k": (lambda v: _is_int(v) and v > 0, int),
    "mmr": (lambda v: _is_number(v) and 0.0 <= v <= 1.0, float),
    "mmr_candidates": (lambda v: _is_int(v) and v > 0, int),
    "length_penalty": (lambda v: _is_number(v) and v >= 0.0, float),
}


def _option_items(node: exp.Expression) -> list[tuple[str, exp.Expression]]:
    if not isinstance(node, exp.Struct):
        raise UserError("knn() options must be written as {name=value, ...}, e.g. {ef=100}", errors.SqlSyntaxError)
    items = []
    for item in node.expressions:
        if isinstance(item, (exp.PropertyEQ, exp.EQ)):
            items.append((item.this.name.lower(), item.expression))
        else:
            items.append((item.alias.lower(), item.this))
    return items


def parse_options(node: exp.Expression, bound: dict[str, Any]) -> KnnOptions:
    values: dict[str, Any] = {}
    for name, value_node in _option_items(node):
        ok, value = literal(value_node, bound)
        check, convert = _OPTIONS.get(name, (None, None))
        if check is None or not ok or not check(value):
            raise UserError(f"Unable to parse KNN option '{name}'", errors.SqlSyntaxError)
        values[name] = convert(value)
    return KnnOptions(**values)


@dataclass(frozen=True)
class KnnArguments:
    column: exp.Column
    k: exp.Expression | None
    query: exp.Expression
    options: exp.Expression | None


def split_arguments(call: exp.Anonymous) -> KnnArguments:
    """``(col, query)``, ``(col, query, {opts})``, ``(col, k, query)`` or ``(col, k, query, {opts})``."""
    args = list(call.expressions)
    if len(args) not in (2, 3, 4) or not isinstance(args[0], exp.Column):
        raise UserError("knn() expects (column, [k,] query [, {options}])", errors.SqlSyntaxError)
    options = args.pop() if len(args) > 2 and isinstance(args[-1], exp.Struct) else None
    if len(args) == 2:
        return KnnArguments(args[0], None, args[1], options)
    if len(args) == 3:
        return KnnArguments(args[0], args[1], args[2], options)
    raise UserError("knn() expects (column, [k,] query [, {options}])", errors.SqlSyntaxError)


def limit_k(select: exp.Expression, bound: dict[str, Any]) -> int:
    """k when knn() has none: LIMIT + OFFSET (capped at max_matches), else Manticore's default 20."""
    limit = _clause_int(select.args.get("limit"), bound)
    if limit is None:
        return MANTICORE_DEFAULT_LIMIT
    offset = _clause_int(select.args.get("offset"), bound) or 0
    return max(1, min(limit + offset, MANTICORE_MAX_MATCHES))


def _clause_int(clause: exp.Expression | None, bound: dict[str, Any]) -> int | None:
    if clause is None:
        return None
    node = clause.expression if clause.args.get("expression") is not None else clause.this
    ok, value = literal(node, bound) if node is not None else (False, None)
    return int(value) if ok and _is_int(value) else None


def resolve_k(positional: int | None, options: KnnOptions, default: int) -> int:
    k = options.k if options.k is not None else positional
    return default if k is None else k
