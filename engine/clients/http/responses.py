"""What the HTTP side answers: Manticore's error shapes and engine values as JSON.

Three error shapes, as Manticore's ``searchdhttp.cpp`` writes them: ``{"error": "msg"}`` (``/sql``,
``/search``), ``{"error": "msg", "status": N}``, and ``{"error": {"type", "reason", "table"},
"status": N}`` (the document endpoints: ``parse_exception`` 400 for a bad request,
``action_request_validation_exception`` 409 for what the engine refused).
"""
from __future__ import annotations

import base64
import datetime
import decimal
import math
from typing import Any

from tesseradb.clients.shell.render import cell, time_text

PARSE = "parse_exception"
REFUSED = "action_request_validation_exception"


class ApiError(Exception):
    """Ends a request with ``body`` (already in Manticore's shape) and HTTP ``status``."""

    def __init__(self, body: Any, status: int):
        super().__init__(body)
        self.body, self.status = body, status


def plain(message: str, status: int = 400) -> ApiError:
    return ApiError({"error": message}, status)


def with_status(message: str, status: int) -> ApiError:
    return ApiError({"error": message, "status": status}, status)


def typed(message: str, kind: str, status: int, table: str | None = None) -> ApiError:
    error: dict[str, Any] = {"type": kind, "reason": message}
    if table is not None:
        error["table"] = table
    return ApiError({"error": error, "status": status}, status)


def engine_message(exc: Exception) -> str:
    """An engine error as Manticore words SQL errors over HTTP: the message, without MySQL's prefix."""
    return getattr(exc, "msg", None) or str(exc)


# -- values ------------------------------------------------------------------------------------
def json_value(value: Any) -> Any:
    """An engine value as JSON: numbers, text, JSON documents and vectors (arrays) as themselves."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    return _other(value)


def _other(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return base64.b64encode(data).decode("ascii")
    if isinstance(value, datetime.timedelta):
        return time_text(value)
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat(sep=" ") if isinstance(value, datetime.datetime) else value.isoformat()
    return str(value)


# Declared type codes (cursor.description) -> the type names of Manticore's raw /sql answer.
RAW_TYPES = {
    "INTEGER": "long long", "BIGINT": "long long", "INT": "long long", "BOOL_INT": "long",
    "TIMESTAMP_INT": "timestamp", "FLOAT": "float", "REAL": "double", "DOUBLE": "double",
    "TEXT": "string", "STRING_TEXT": "string", "JSON_TEXT": "json", "BLOB": "string",
    "FLOAT_VECTOR_BLOB": "float_vector", "FLOAT_VECTOR_ARRAY_BLOB": "float_vector_array",
    "DATE_TEXT": "string", "DATETIME_TEXT": "string", "TIME_TEXT": "string",
}
AS_TEXT = {"FLOAT_VECTOR_BLOB", "FLOAT_VECTOR_ARRAY_BLOB"}


def raw_type(code: str | None, values: list[Any]) -> str:
    if code and code.upper() in RAW_TYPES:
        return RAW_TYPES[code.upper()]
    kinds = {type(v) for v in values if v is not None}
    if kinds and kinds <= {int, bool}:
        return "long long"
    if kinds and kinds <= {int, bool, float}:
        return "float"
    return "string"


def raw_result(description: list[tuple], rows: list[tuple], warning: str = "") -> dict[str, Any]:
    """A result set as Manticore's ``/sql?mode=raw`` writes it; vectors as the SQL side prints them."""
    names = [str(d[0]) for d in description]
    codes = [(d[1] or "").upper() for d in description]
    columns = [{name: {"type": raw_type(code, [r[i] for r in rows])}}
               for i, (name, code) in enumerate(zip(names, codes))]
    text = [code in AS_TEXT for code in codes]
    data = [{name: (cell(v, code) if as_text and v is not None else json_value(v))
             for name, code, as_text, v in zip(names, codes, text, row)} for row in rows]
    return {"columns": columns, "data": data, "total": len(rows), "error": "", "warning": warning}


def raw_ok(affected: int, warning: str = "") -> dict[str, Any]:
    return {"total": max(affected, 0), "error": "", "warning": warning}
