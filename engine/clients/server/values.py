"""Engine values -> MySQL column types and wire values.

The declared type of each result column comes from ``cursor.description`` (tesseradb's type codes);
computed columns (no declared type) are typed from their values. Vectors travel as text in
Manticore's form (``0.100000,0.200000`` and ``[[...],[...]]``), exactly as the shell prints them,
and JSON as JSON text: a MySQL client has no vector type, and every client can read text.
"""
from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from mysql_mimic import ResultColumn
from mysql_mimic.charset import CharacterSet
from mysql_mimic.types import ColumnType

from tesseradb.clients.shell.render import VECTOR_DECLS, cell, time_text

# tesseradb's declared type codes (cursor.description[i][1]) -> the MySQL type sent to clients.
DECLARED: dict[str, ColumnType] = {
    "INTEGER": ColumnType.LONGLONG, "BIGINT": ColumnType.LONGLONG, "INT": ColumnType.LONGLONG,
    "TIMESTAMP_INT": ColumnType.LONGLONG, "BOOL_INT": ColumnType.TINY,
    "FLOAT": ColumnType.DOUBLE, "REAL": ColumnType.DOUBLE, "DOUBLE": ColumnType.DOUBLE,
    "TEXT": ColumnType.VAR_STRING, "STRING_TEXT": ColumnType.VAR_STRING,
    "JSON_TEXT": ColumnType.VAR_STRING, "FLOAT_VECTOR_BLOB": ColumnType.VAR_STRING,
    "FLOAT_VECTOR_ARRAY_BLOB": ColumnType.VAR_STRING, "BLOB": ColumnType.BLOB,
    "DATE_TEXT": ColumnType.DATE, "DATETIME_TEXT": ColumnType.DATETIME, "TIME_TEXT": ColumnType.TIME,
}
AS_TEXT = VECTOR_DECLS | {"JSON_TEXT"}
BINARY = {"character_set": CharacterSet.binary}    # MySQL's charset 63: clients return bytes, not text

# A column's declared type (``ColumnInfo.declared_type``) -> what COM_FIELD_LIST reports; MySQL's own names pass upper-cased.
SCHEMA_TYPES: dict[str, str] = {
    "bigint": "BIGINT", "int": "INT", "integer": "INT", "uint": "INT UNSIGNED", "float": "DOUBLE",
    "bool": "TINYINT(1)",
    "timestamp": "BIGINT", "json": "JSON", "text": "TEXT", "string": "VARCHAR(255)",
    "float_vector": "TEXT", "float_vector_array": "TEXT", "date": "DATE", "datetime": "DATETIME", "time": "TIME",
}


def _from_values(values: list[Any]) -> ColumnType:
    kinds = {type(v) for v in values if v is not None}
    if not kinds:
        return ColumnType.VAR_STRING
    if kinds <= {int, bool}:
        return ColumnType.LONGLONG
    if kinds <= {int, bool, float}:
        return ColumnType.DOUBLE
    if kinds <= {bytes, bytearray, memoryview}:
        return ColumnType.BLOB
    return ColumnType.VAR_STRING


def column_types(description: Sequence[tuple], rows: list[tuple]) -> list[ColumnType]:
    types = []
    for i, d in enumerate(description):
        declared = DECLARED.get((d[1] or "").upper())
        types.append(declared if declared is not None else _from_values([r[i] for r in rows]))
    return types


def _convert(value: Any, decl: str, kind: ColumnType) -> Any:
    """One value as the wire type expects it (NULL stays None)."""
    if value is None:
        return None
    if decl in AS_TEXT or (kind == ColumnType.VAR_STRING and not isinstance(value, str)):
        return cell(value, decl or None)
    if kind == ColumnType.LONGLONG or kind == ColumnType.TINY:
        return int(value)
    if kind == ColumnType.DOUBLE:
        return float(value)
    if kind == ColumnType.BLOB and not isinstance(value, bytes):
        return bytes(value) if isinstance(value, (bytearray, memoryview)) else str(value).encode()
    return value


# What a value of each wire type already is when it needs no conversion (any kind not here passes as it is).
READY: dict[ColumnType, type] = {ColumnType.LONGLONG: int, ColumnType.TINY: int, ColumnType.DOUBLE: float,
                                 ColumnType.VAR_STRING: str, ColumnType.BLOB: bytes}


def _as_is(column: list[Any], decl: str, kind: ColumnType) -> bool:
    """Every value of the column is what :func:`_convert` would make of it (NULL included)."""
    if decl in AS_TEXT:
        return all(v is None for v in column)
    ready = READY.get(kind)
    return ready is None or all(v is None or type(v) is ready for v in column)


SHAPES_KEPT = 256       # result shapes a connection keeps the columns of (``result_set``'s ``shapes``)


def result_set(description: Sequence[tuple], rows: list[tuple], shapes: dict | None = None
               ) -> tuple[list[tuple], list[ResultColumn]]:
    """Rows and typed columns for mysql-mimic's text and binary result writers. Columns whose values
    are already what the wire type expects (an INTEGER column of ints, a TEXT column of str) are not
    copied value by value: the rows go out as the engine returned them when all columns are so.
    ``shapes``: a connection's columns by result shape (names, declared and wire types), so that a
    statement run again gets the same column list (protocol.py keeps its header packets by it)."""
    types = column_types(description, rows)
    decls = [(d[1] or "").upper() for d in description]
    key = (tuple(description), tuple(types)) if shapes is not None else None
    columns = shapes.get(key) if shapes is not None else None
    if columns is None:
        columns = [ResultColumn(name=str(d[0]), type=t, text_encoder=TEXT_ENCODERS.get(t),
                                **BINARY if t == ColumnType.BLOB else {})       # bytes come back as bytes
                   for d, t in zip(description, types)]
        if shapes is not None:
            if len(shapes) >= SHAPES_KEPT:
                shapes.clear()
            shapes[key] = columns
    convert = [not _as_is([r[i] for r in rows], decl, t) for i, (decl, t) in enumerate(zip(decls, types))]
    if not any(convert):
        return rows, columns
    out = [tuple(_convert(v, decl, t) if c else v for v, decl, t, c in zip(row, decls, types, convert))
           for row in rows]
    return out, columns


def _float_text(column: ResultColumn, value: Any) -> bytes:
    """Floats as the shell prints them: a float32 distance is 0.3077827, not 0.30778270959854126."""
    return cell(float(value)).encode()


def _time_text(column: ResultColumn, value: Any) -> bytes:
    """A TIME as MySQL sends it (``838:59:59``), not Python's ``34 days, 22:59:59``."""
    return (time_text(value) if isinstance(value, timedelta) else str(value)).encode()


TEXT_ENCODERS = {ColumnType.DOUBLE: _float_text, ColumnType.TIME: _time_text}


def schema_type(engine_type: str) -> str:
    return SCHEMA_TYPES.get(engine_type.lower(), engine_type.upper())
