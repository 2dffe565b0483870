"""DATE, DATETIME, TIMESTAMP and TIME parameters of COM_STMT_EXECUTE (issue 22).

mysql-mimic 3.0 reads string and number parameters only (``Unsupported parameter type: 12`` for a
Python ``datetime`` sent by mysql-connector's prepared statements), and its packet module is compiled,
so its value reader cannot be extended. :func:`read_params` reads the parameter block as mysql-mimic's
``_read_params`` does (null bitmap, new-params-bound flag, types, optional names, values), decodes the
binary protocol's temporal layouts (MySQL's "Binary Protocol Value": a length byte 0/4/7/11 for dates,
0/8/12 for TIME) into Python ``date`` / ``datetime`` / ``timedelta``, and hands every other value to
mysql-mimic's reader.
"""
from __future__ import annotations

import datetime as dt
import io
from typing import Any

from mysql_mimic import packets
from mysql_mimic.errors import ErrorCode, MysqlError
from mysql_mimic.results import NullBitmap
from mysql_mimic.types import Capabilities, ColumnType, read_str_len, read_uint_1, read_uint_2, read_uint_4

DATES = {ColumnType.DATE, ColumnType.DATETIME, ColumnType.TIMESTAMP, ColumnType.NEWDATE}


def _date(reader: io.BytesIO, kind: ColumnType) -> dt.date | dt.datetime | None:
    length = read_uint_1(reader)
    if length == 0:
        return None if kind == ColumnType.DATE else dt.datetime(1, 1, 1)
    year, month, day = read_uint_2(reader), read_uint_1(reader), read_uint_1(reader)
    hour = minute = second = micro = 0
    if length >= 7:
        hour, minute, second = read_uint_1(reader), read_uint_1(reader), read_uint_1(reader)
    if length >= 11:
        micro = read_uint_4(reader)
    if kind == ColumnType.DATE and length == 4:
        return dt.date(year, month, day)
    return dt.datetime(year, month, day, hour, minute, second, micro)


def _time(reader: io.BytesIO) -> dt.timedelta:
    length = read_uint_1(reader)
    if length == 0:
        return dt.timedelta(0)
    negative, days = read_uint_1(reader), read_uint_4(reader)
    hour, minute, second = read_uint_1(reader), read_uint_1(reader), read_uint_1(reader)
    micro = read_uint_4(reader) if length >= 12 else 0
    value = dt.timedelta(days=days, hours=hour, minutes=minute, seconds=second, microseconds=micro)
    return -value if negative else value


def _value(charset: Any, reader: io.BytesIO, kind: ColumnType, unsigned: bool) -> Any:
    if kind in DATES:
        return _date(reader, kind)
    if kind == ColumnType.TIME:
        return _time(reader)
    return packets._read_param_value(charset, reader, kind, unsigned)


def read_params(capabilities: Capabilities, charset: Any, reader: io.BytesIO, count: int,
                buffers: dict[int, bytearray] | None = None) -> list[tuple[str | None, Any]]:
    """(name, value) of each parameter; the layout of mysql-mimic's ``packets._read_params``."""
    if not count:
        return []
    nulls = NullBitmap.from_buffer(reader, count)
    if not read_uint_1(reader):
        raise MysqlError("Server requires the new-params-bound-flag to be set", ErrorCode.NOT_SUPPORTED_YET)
    kinds = []
    for _ in range(count):
        kind, unsigned = packets._read_param_type(reader)
        name = charset.decode(read_str_len(reader)) if Capabilities.CLIENT_QUERY_ATTRIBUTES in capabilities else ""
        kinds.append((name, kind, unsigned))
    out: list[tuple[str | None, Any]] = []
    for i, (name, kind, unsigned) in enumerate(kinds):
        if nulls.is_flipped(i):
            out.append((name, None))
        elif buffers and i in buffers:
            out.append((name, charset.decode(buffers[i])))
        else:
            out.append((name, _value(charset, reader, kind, unsigned)))
    return out
