"""What a statement gives back, and the warnings it leaves: value types at the bottom of the engine
layer, shared by the statement handlers, the services below them and the clients above."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

Params = Sequence[Any] | dict[str, Any] | None


@dataclass
class Result:
    """What one statement produced."""
    columns: list[tuple[str, str | None]] | None = None   # (name, declared type) of a result set
    rows: list[tuple] = field(default_factory=list)
    rowcount: int = -1
    lastrowid: int | None = None
    message: str | None = None                          # e.g. for statements with no rows


@dataclass(frozen=True)
class Warn:
    level: str
    code: int
    message: str
    truncated: str | None = None     # the vector column whose text the model cut (DataTruncatedWarning)
