"""Parameters and values: binding placeholders, evaluating VALUES rows, checking vector values."""
from __future__ import annotations

import datetime
import itertools
import math
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from tesseradb.catalog import temporal_values, vector_text
from tesseradb.storage.rowstore import RowStore

from tesseradb import errors
from tesseradb.errors import UserError

if TYPE_CHECKING:
    import numpy as np     # imported where used: plain SQL does not load numpy (start-up)


Params = Sequence[Any] | Mapping[str, Any] | None


def _in_text_order(expr: exp.Expression, holders: list[exp.Placeholder]) -> list[exp.Placeholder]:
    """Placeholders in the order they are written: the tree's own order differs (a SELECT's LIMIT
    comes before its WHERE), so mark each one, render the statement and sort by position."""
    if len(holders) < 2:
        return holders
    names = [h.this for h in holders]
    for n, holder in enumerate(holders):
        holder.set("this", f"tessera_order_{n}_")
    text = expr.sql(dialect="mysql")
    order = sorted(range(len(holders)), key=lambda n: text.find(f"tessera_order_{n}_"))
    for holder, name in zip(holders, names):
        holder.set("this", name)
    return [holders[n] for n in order]


def bind(expr: exp.Expression, params: Params) -> tuple[exp.Expression, dict[str, Any]]:
    """Give every placeholder a name (``?`` becomes ``:p1``, ``:p2`` ... in order of appearance) and
    return the statement with the parameter dict that SQLite will bind. Values are never pasted into
    SQL text."""
    holders = list(expr.find_all(exp.Placeholder, bfs=False))
    if not holders:
        if params:
            raise UserError(f"Incorrect number of bindings supplied: the statement uses 0, "
                            f"and there are {len(params)} supplied", errors.ProgrammingError)
        return expr, {}
    expr = expr.copy()
    holders = _in_text_order(expr, list(expr.find_all(exp.Placeholder, bfs=False)))
    positional = [h for h in holders if not h.this]
    if positional and len(positional) != len(holders):
        raise UserError("cannot mix ? and :name parameters in one statement", errors.ProgrammingError)
    if positional:
        if params is None or isinstance(params, Mapping) or len(params) != len(positional):
            supplied = 0 if params is None else len(params)
            raise UserError(f"Incorrect number of bindings supplied: the statement uses {len(positional)}, "
                            f"and there are {supplied} supplied", errors.ProgrammingError)
        bound = {}
        for i, (holder, value) in enumerate(zip(positional, params), start=1):
            holder.set("this", f"p{i}")
            bound[f"p{i}"] = plain(value)
        return expr, bound
    if not isinstance(params, Mapping):
        raise UserError("named parameters need a mapping of values", errors.ProgrammingError)
    bound = {}
    for holder in holders:
        name = str(holder.this)
        if name not in params:
            raise UserError(f"You did not supply a value for binding parameter :{name}",
                            errors.ProgrammingError)
        bound[name] = plain(params[name])
    return expr, bound


def bind_many(expr: exp.Expression, param_sets: Sequence[Params]) -> Iterator[tuple[exp.Expression, dict[str, Any]]]:
    """``bind`` for every parameter set of an executemany, copying the statement only once."""
    bound_expr = None
    names: list[str] = []
    positional = any(not h.this for h in expr.find_all(exp.Placeholder))
    for params in param_sets:
        if bound_expr is None or not names:
            bound_expr, bound = bind(expr, params)
            names = [f"p{i}" for i in range(1, len(bound) + 1)] if positional else \
                list(dict.fromkeys(str(h.this) for h in bound_expr.find_all(exp.Placeholder)))
            yield bound_expr, bound
        elif positional:
            if params is None or isinstance(params, Mapping) or len(params) != len(names):
                yield bind(expr, params)          # raises the count error
            yield bound_expr, {name: plain(value) for name, value in zip(names, params)}
        else:
            if not isinstance(params, Mapping) or any(name not in params for name in names):
                yield bind(expr, params)          # raises the error naming what is missing
            yield bound_expr, {name: plain(params[name]) for name in names}


_AS_IS = frozenset({str, int, float, bytes, type(None)})     # exactly these types: what plain() returns unchanged


def plain(value: Any) -> Any:
    """A parameter as SQLite should see it: numpy scalars become Python numbers (apsw would bind
    them as blobs); datetime, date and time become MySQL's ISO text (``2024-01-31 09:30:00``; an aware
    datetime in UTC), which a DATE/DATETIME column stores as it is and a timestamp column turns into Unix
    seconds (catalog/temporal_values.py, sql/temporal.py)."""
    if type(value) in _AS_IS:
        return value
    np = sys.modules.get("numpy")      # a numpy scalar exists only once numpy is loaded
    if np is not None and isinstance(value, np.generic) and not isinstance(value, (np.str_, np.bytes_)):
        return value.item()
    if isinstance(value, datetime.datetime):
        return temporal_values.datetime_text(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, (datetime.time, datetime.timedelta)):
        return temporal_values.time_text(value)
    return value


def literal(node: exp.Expression, bound: dict[str, Any]) -> tuple[bool, Any]:
    """(True, value) when the node is a constant we can read without SQLite."""
    if isinstance(node, exp.Literal):
        if node.is_string:
            return True, node.this
        text = node.this
        try:
            return True, int(text)
        except ValueError:
            pass
        try:
            return True, float(text)
        except ValueError:                  # the tokenizer lets through e.g. '0.1e'
            raise UserError(f"unrecognized token: '{text}'", errors.SqlSyntaxError) from None
    if isinstance(node, exp.Null):
        return True, None
    if isinstance(node, exp.Boolean):
        return True, bool(node.this)
    if isinstance(node, exp.Placeholder):
        return True, bound[str(node.this)]
    if isinstance(node, exp.Neg):
        ok, value = literal(node.this, bound)
        if ok and isinstance(value, (int, float)) and not isinstance(value, bool):
            return True, -value
    if isinstance(node, (exp.Array, exp.Tuple)):
        items = [literal(e, bound) for e in node.expressions]
        if all(ok for ok, _ in items):
            return True, VectorLiteral([v for _, v in items], nested=isinstance(node, exp.Array))
    if isinstance(node, exp.Paren):
        ok, value = literal(node.this, bound)
        if ok and isinstance(value, (int, float)) and not isinstance(value, bool):
            return True, VectorLiteral([value], nested=False)
    return False, None


class VectorLiteral(list):
    """A bracketed or parenthesised list written in SQL: ``(0.1, 0.2)`` or ``[[1,2],[3,4]]``."""

    def __init__(self, items: list[Any], nested: bool):
        super().__init__(items)
        self.nested = nested


def evaluate_row(store: RowStore, row: Sequence[exp.Expression], bound: dict[str, Any]) -> list[Any]:
    values: list[Any] = []
    slow: list[int] = []
    for i, node in enumerate(row):
        ok, value = literal(node, bound)
        values.append(value)
        if not ok:
            slow.append(i)
    if slow:
        select = exp.select(*[row[i] for i in slow])
        out = store.one(select.sql(dialect="sqlite"), bound)
        for i, value in zip(slow, out):
            values[i] = value
    return values


# -- vector values --------------------------------------------------------------------------
def _fail(row: int, column: str, message: str) -> UserError:
    return errors.at(errors.Place(row=row), message, errors.DataError, column=column)


def _as_float_list(seq: Sequence[Any], row: int, column: str, number: int) -> list[float]:
    import numpy as np
    out = []
    for item in seq:
        if isinstance(item, bool) or not isinstance(item, (int, float, np.integer, np.floating)):
            raise _fail(row, column, "incompatible value specified for a float vector column")
        value = float(item)
        if not math.isfinite(value):
            raise _fail(row, column, f"vector #{number} contains NaN or infinity")
        out.append(value)
    return out


def to_vectors(value: Any, *, is_array: bool, dims: int | None, normalize: bool, row: int,
               column: str, model: str | None = None) -> np.ndarray:
    """Check a supplied vector value and return it as a 2-D float32 array (one row per vector)."""
    import numpy as np
    if value is None:
        return np.zeros((0, dims or 0), np.float32)
    fast = _numeric_matrix(value, is_array)
    if fast is not None:
        return _checked(fast, dims=dims, normalize=normalize, row=row, column=column, model=model, is_array=is_array)
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, str):      # only the text SELECT printed for such a column (catalog/vector_text.py)
        value = vector_text.read_back(value, is_array)
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise _fail(row, column, "incompatible value specified for a float vector column")
    nested = any(isinstance(v, (list, tuple, np.ndarray)) for v in value)
    if is_array:
        if value and not nested:
            raise _fail(row, column, "float_vector_array requires an array of vectors, e.g. [[1,2],[3,4]]")
        vectors = []
        for n, vec in enumerate(value, start=1):
            if isinstance(vec, np.ndarray):
                vec = vec.tolist()
            if not isinstance(vec, (list, tuple)):
                raise _fail(row, column, "float_vector_array requires an array of vectors, e.g. [[1,2],[3,4]]")
            if not vec:
                raise _fail(row, column, f"vector #{n} is empty; vectors must have at least one entry")
            if vectors and len(vec) != len(vectors[0]):
                raise _fail(row, column, f"vector #{n} has {len(vec)} entries, expected {len(vectors[0])}")
            vectors.append(_as_float_list(vec, row, column, n))
    else:
        if nested or getattr(value, "nested", False) and value and isinstance(value[0], list):
            raise _fail(row, column, "nested vector syntax is only valid for float_vector_array attributes")
        vectors = [_as_float_list(value, row, column, 1)] if value else []
    with np.errstate(over="ignore"):
        matrix = np.array(vectors, dtype=np.float32).reshape(len(vectors), -1) if vectors else \
            np.zeros((0, dims or 0), np.float32)
    return _checked(matrix, dims=dims, normalize=normalize, row=row, column=column, model=model,
                    is_array=is_array)


def _numeric_matrix(value: Any, is_array: bool) -> np.ndarray | None:
    """The common case at C speed: a well-formed numeric list or array, finite in float32. Anything
    else returns None and goes through the element-by-element checks, which name the problem."""
    import numpy as np
    if not isinstance(value, (list, tuple, np.ndarray)) or getattr(value, "nested", False) and not is_array:
        return None
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError):            # ragged
        return None
    if arr.dtype.kind not in "iuf" or arr.ndim != (2 if is_array else 1) or arr.size == 0:
        return None
    if not isinstance(value, np.ndarray) and any(     # numpy would read True as 1
            isinstance(v, bool) for v in (itertools.chain.from_iterable(value) if is_array else value)):
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        matrix = arr.astype(np.float32).reshape(-1, arr.shape[-1])
    return matrix if np.isfinite(matrix).all() else None


def _checked(matrix: np.ndarray, *, dims: int | None, normalize: bool, row: int, column: str,
             model: str | None, is_array: bool = True) -> np.ndarray:
    import numpy as np
    if not np.isfinite(matrix).all():   # finite as a double but beyond float32 (|x| > 3.4e38)
        n = int(np.flatnonzero(~np.isfinite(matrix).all(axis=1))[0]) + 1
        raise _fail(row, column, f"vector #{n} has a value out of the float32 range")
    if dims is not None and len(matrix) and matrix.shape[1] != dims:
        if model:
            raise _fail(row, column, f"attribute '{column}' has model_name={model} specified, but vector "
                                     f"contents with {matrix.shape[1]} values is provided")
        what = "vectors have" if is_array else "data has"     # Manticore's two wordings
        raise _fail(row, column, f"{what} {matrix.shape[1]} values, index '{column}' needs {dims} values")
    if normalize and len(matrix):
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    return matrix
