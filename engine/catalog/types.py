"""Column types: how each is declared in SQLite, checked on write and converted on read.

SQLite reports a result column's declared type (``decltype``) whenever the column is a plain column
reference, through ``*``, aliases and subqueries alike; the declared types below are chosen so that
SQLite's affinity rules give the right storage class and the name tells us how to convert back.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    import numpy as np     # imported where used: plain SQL does not load numpy (start-up)

from tesseradb.catalog import temporal_values
from tesseradb.catalog.vector_columns import VECTOR_TYPES  # noqa: F401 - defined there, named here too
from tesseradb.storage.blobs import pack_array, pack_vector, unpack, vector_count  # noqa: F401 - re-exported


@dataclass(frozen=True)
class ColumnType:
    name: str            # canonical name, as DESCRIBE shows it
    decl: str            # declared type in SQLite
    check: str | None    # CHECK expression ({c} = quoted column) enforcing the type on write
    message: str         # what a failing check means


TYPES: dict[str, ColumnType] = {t.name: t for t in (
    ColumnType("text", "TEXT", "typeof({c}) IN ('text','null')", "Incorrect string value"),
    ColumnType("string", "STRING_TEXT", "typeof({c}) IN ('text','null')", "Incorrect string value"),
    ColumnType("int", "INTEGER", "typeof({c}) IN ('integer','null')", "Incorrect integer value"),
    ColumnType("bigint", "BIGINT", "typeof({c}) IN ('integer','null')", "Incorrect integer value"),
    ColumnType("float", "FLOAT", "typeof({c}) IN ('real','integer','null')", "Incorrect float value"),
    ColumnType("bool", "BOOL_INT", "{c} IS NULL OR {c} IN (0, 1)", "Incorrect boolean value"),
    ColumnType("json", "JSON_TEXT", "{c} IS NULL OR json_valid({c})", "Invalid JSON text"),
    ColumnType("timestamp", "TIMESTAMP_INT", "typeof({c}) IN ('integer','null')", "Incorrect timestamp value"),
    # MySQL's DATE / DATETIME / TIME (issue 22): ISO text, so SQLite compares, sorts and groups them right
    ColumnType("date", "DATE_TEXT", "{c} IS NULL OR (typeof({c}) = 'text' AND date({c}) = {c})",
               "Incorrect date value"),
    ColumnType("datetime", "DATETIME_TEXT", "{c} IS NULL OR (typeof({c}) = 'text' AND julianday({c}) IS NOT NULL)",
               "Incorrect datetime value"),
    ColumnType("time", "TIME_TEXT", "{c} IS NULL OR (typeof({c}) = 'text' AND {c} GLOB '*[0-9]:[0-5][0-9]:[0-5][0-9]*')",
               "Incorrect time value"),
    ColumnType("float_vector", "FLOAT_VECTOR_BLOB", None, ""),
    ColumnType("float_vector_array", "FLOAT_VECTOR_ARRAY_BLOB", None, ""),
)}

TEXT_TYPES = ("text", "string")


def _floats(arr: np.ndarray) -> list[float]:
    # repr of a float32 is its shortest round-trip form: 0.1 prints as 0.1, not 0.10000000149
    import numpy as np
    return [float(str(x)) for x in arr.astype(np.float32)]


def _read_vector(blob: bytes | None) -> list[float] | None:
    return None if blob is None else (_floats(unpack(blob, False)[0]) if blob else [])


def _read_array(blob: bytes | None) -> list[list[float]] | None:
    return None if blob is None else [_floats(v) for v in unpack(blob, True)]


def _read_json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _read_bool(value: Any) -> Any:
    return bool(value) if isinstance(value, int) else value


READERS: dict[str, Callable[[Any], Any]] = {
    **temporal_values.READERS,
    "BOOL_INT": _read_bool,
    "JSON_TEXT": _read_json,
    "FLOAT_VECTOR_BLOB": _read_vector,
    "FLOAT_VECTOR_ARRAY_BLOB": _read_array,
}


def reader_for(decltype: str | None) -> Callable[[Any], Any] | None:
    return READERS.get((decltype or "").upper())


def write_value(type_name: str, value: Any) -> Any:
    """Convert a Python value bound for a scalar column into what SQLite stores."""
    np = sys.modules.get("numpy")      # a numpy scalar exists only once numpy is loaded
    if value is None:
        return None
    if type_name == "json" and isinstance(value, (bytes, bytearray, memoryview)):
        from tesseradb.errors import BinaryJson, UserError
        raise UserError("Cannot create a JSON value from a string with CHARACTER SET 'binary'.", BinaryJson)
    if type_name == "json" and not isinstance(value, str):
        return json.dumps(value)
    if type_name == "bool" and (isinstance(value, bool) or np is not None and isinstance(value, np.bool_)):
        return int(value)
    if np is not None and type_name in ("int", "bigint", "timestamp", "bool") and isinstance(value, np.integer):
        return int(value)
    if np is not None and type_name == "float" and isinstance(value, np.floating):
        return float(value)
    if type_name == "timestamp" and isinstance(value, str):
        return _parse_timestamp(value)
    if type_name in temporal_values.WRITERS:
        return temporal_values.WRITERS[type_name](value)
    return value


def _parse_timestamp(text: str) -> Any:
    from datetime import datetime, timezone
    for fmt in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d"):
        try:
            return int(datetime.strptime(text.strip(), fmt).replace(tzinfo=timezone.utc).timestamp())
        except ValueError:
            continue
    try:                    # ISO 8601 with a zone: 2024-01-02T03:04:05Z, ...+02:00
        parsed = datetime.fromisoformat(text.strip())
    except ValueError:
        return text  # left for the CHECK constraint to reject
    return int((parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)).timestamp())
