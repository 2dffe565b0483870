"""SQL functions registered on every connection: MySQL functions that sqlglot emits for SQLite but
SQLite lacks, and the vector helpers the planner rewrites calls into."""
from __future__ import annotations

import re
import time
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any

import apsw

from tesseradb.catalog import date_functions, snippets, vector_text
from tesseradb.catalog.types import vector_count, write_value


def _now() -> str:
    return datetime.now().strftime("%Y-%m-%d %H:%M:%S")


def _unix_timestamp(value: Any = None) -> int | None:
    if value is None:
        return int(time.time())
    if isinstance(value, (int, float)):
        return int(value)
    for fmt in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d"):
        try:
            return int(datetime.strptime(str(value), fmt).replace(tzinfo=timezone.utc).timestamp())
        except ValueError:
            continue
    return None


def _from_unixtime(value: Any, fmt: Any = None) -> str | None:
    if value is None:
        return None
    return datetime.fromtimestamp(float(value), tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def _left(s: Any, n: Any) -> Any:
    return None if s is None or n is None else str(s)[: max(int(n), 0)]


def _right(s: Any, n: Any) -> Any:
    if s is None or n is None:
        return None
    n = int(n)
    return str(s)[-n:] if n > 0 else ""


def _reverse(s: Any) -> Any:
    return None if s is None else str(s)[::-1]


def _repeat(s: Any, n: Any) -> Any:
    return None if s is None or n is None else str(s) * max(int(n), 0)


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _regexp(pattern: Any, value: Any) -> Any:
    if pattern is None or value is None:
        return None
    return 1 if _compiled(str(pattern)).search(str(value)) else 0


def _timestamp(value: Any) -> Any:
    """What a timestamp column stores for a value: a date string becomes Unix seconds (UTC)."""
    return write_value("timestamp", value)


def _vector_length(blob: Any) -> int:
    return vector_count(blob, False)


def _array_length(blob: Any) -> int:
    return vector_count(blob, True)


# name -> (function, number of arguments; -1 = any)
FUNCTIONS: dict[str, tuple[Any, int]] = {
    **date_functions.FUNCTIONS,
    "now": (_now, 0),
    "sysdate": (_now, 0),
    "unix_timestamp": (_unix_timestamp, -1),
    "unix_to_time": (_from_unixtime, -1),
    "from_unixtime": (_from_unixtime, -1),
    "left": (_left, 2),
    "right": (_right, 2),
    "reverse": (_reverse, 1),
    "repeat": (_repeat, 2),
    "regexp": (_regexp, 2),
    "_tessera_timestamp": (_timestamp, 1),
    "_tessera_vector_length": (_vector_length, 1),
    "_tessera_array_length": (_array_length, 1),
    "to_string": (vector_text.to_string, 1),
    "_tessera_vector_text": (vector_text.vector_text, 1),
    "_tessera_array_text": (vector_text.array_text, 1),
}
DETERMINISTIC = {*date_functions.FUNCTIONS, "to_string", "_tessera_vector_text", "_tessera_array_text",
                 "left", "right", "reverse", "repeat", "regexp", "_tessera_vector_length", "_tessera_array_length",
                 "_tessera_timestamp"}


def register(conn: apsw.Connection) -> None:
    for name, (fn, nargs) in FUNCTIONS.items():
        conn.create_scalar_function(name, fn, nargs, deterministic=name in DETERMINISTIC)
    snippets.register(conn)          # HIGHLIGHT() / SNIPPET() passages
