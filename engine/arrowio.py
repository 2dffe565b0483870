"""Columnar data in and out through pyarrow: results as Arrow tables."""
from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

if TYPE_CHECKING:
    from .database import Result


def result_to_arrow(result: "Result") -> pa.Table:
    names = [name for name, _ in result.columns]
    columns = list(zip(*result.rows)) if result.rows else [[] for _ in names]
    return pa.table({name: pa.array(list(col)) for name, col in zip(_unique(names), columns)})


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n}_{seen[n]}")
    return out
