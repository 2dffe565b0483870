"""PEP 249's type objects and constructors: ``STRING``, ``NUMBER`` ... compare equal to the type codes
of ``Cursor.description`` (the declared type); ``Date``, ``Binary`` ... build bound values."""
from __future__ import annotations

import datetime as _dt


class DBAPITypeObject:
    """Compares equal to the type codes of ``Cursor.description`` (the declared type) of its kind."""

    def __init__(self, name: str, *codes: str):
        self.name, self.codes = name, frozenset(codes)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and other.upper() in self.codes

    def __hash__(self) -> int:
        return hash(self.codes)

    def __repr__(self) -> str:
        return self.name


STRING = DBAPITypeObject("STRING", "TEXT", "STRING_TEXT", "JSON_TEXT")
BINARY = DBAPITypeObject("BINARY", "BLOB", "FLOAT_VECTOR_BLOB", "FLOAT_VECTOR_ARRAY_BLOB")
NUMBER = DBAPITypeObject("NUMBER", "INTEGER", "BIGINT", "FLOAT", "REAL", "BOOL_INT", "TIMESTAMP_INT")
DATETIME = DBAPITypeObject("DATETIME", "TIMESTAMP_INT", "DATE_TEXT", "DATETIME_TEXT", "TIME_TEXT")
ROWID = DBAPITypeObject("ROWID", "INTEGER")

Date, Time, Timestamp = _dt.date, _dt.time, _dt.datetime   # bound dates become Unix seconds (UTC)
Binary = bytes


def DateFromTicks(ticks: float) -> _dt.date:  # noqa: N802 - PEP 249 name
    return _dt.datetime.fromtimestamp(ticks, _dt.timezone.utc).date()


def TimeFromTicks(ticks: float) -> _dt.time:  # noqa: N802 - PEP 249 name
    return _dt.datetime.fromtimestamp(ticks, _dt.timezone.utc).time()


def TimestampFromTicks(ticks: float) -> _dt.datetime:  # noqa: N802 - PEP 249 name
    return _dt.datetime.fromtimestamp(ticks, _dt.timezone.utc)
