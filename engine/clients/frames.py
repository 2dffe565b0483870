"""Result sets as pandas DataFrames and NumPy arrays (``Cursor.fetchdf()``, ``Cursor.fetchnumpy()``).

Both go through the Arrow table of ``fetch_arrow_table()``, so every type converts once, in one place:
vectors become float32 arrays, JSON stays text where a column mixes kinds, NULL is None/NaN. pandas is
an optional extra (``pip install 'tesseradb[pandas]'``); without it ``fetchdf()`` says how to get it.
"""
from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pyarrow as pa

from tesseradb import errors

PANDAS_MISSING = ("fetchdf() needs pandas, which is an optional extra: pip install 'tesseradb[pandas]' "
                  "(or pip install pandas)")


def to_pandas(table: pa.Table) -> Any:
    """The Arrow table as a pandas DataFrame; a clear InterfaceError when pandas is missing."""
    try:
        importlib.import_module("pandas")
    except ImportError:
        raise errors.InterfaceError(PANDAS_MISSING) from None
    return table.to_pandas()


def to_numpy(table: pa.Table) -> dict[str, np.ndarray]:
    """Column name -> NumPy array. A vector column whose rows all hold vectors of one width is one 2-D
    float32 array (rows x dims); other list columns (vector arrays, NULLs) are object arrays of arrays;
    a numeric column with NULLs is a masked array (as DuckDB's fetchnumpy returns)."""
    return {name: _column(table.column(i)) for i, name in enumerate(table.column_names)}


def _column(column: pa.ChunkedArray) -> np.ndarray:
    column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
        return _lists(column)
    if column.null_count and (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)
                              or pa.types.is_boolean(column.type)):
        mask = column.is_null().to_numpy(zero_copy_only=False)
        filled = column.fill_null(False if pa.types.is_boolean(column.type) else 0)
        return np.ma.masked_array(filled.to_numpy(zero_copy_only=False), mask=mask)
    return column.to_numpy(zero_copy_only=False)


def _lists(column: pa.Array) -> np.ndarray:
    values = column.to_pylist()
    widths = {len(v) for v in values if v is not None}
    flat = not pa.types.is_list(column.type.value_type)
    if flat and values and column.null_count == 0 and len(widths) == 1:
        return np.asarray(values, dtype=np.float32)
    out = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        out[i] = None if value is None else np.asarray(value, dtype=np.float32)
    return out
