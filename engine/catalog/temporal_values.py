"""MySQL's DATE, DATETIME and TIME values (issue 22): what a column stores and what a reader gets.

They are stored as ISO text (``2024-01-31``, ``2024-01-31 09:30:00[.ffffff]``, ``09:30:00``), so
SQLite's comparisons, ORDER BY, GROUP BY and its date functions give MySQL's answers; they are read
back as Python ``date``, ``datetime`` and ``timedelta`` (what MySQL drivers return for TIME, which may
exceed 24 hours). A written value may be a Python date/datetime/time/timedelta, an ISO string (``T`` or
a space, ``2024-1-5`` too), or MySQL's numbers (``20240131``, ``20240131093000``). An aware datetime is
converted to UTC; anything else is ``Incorrect datetime value``, ERROR 1292.
"""
from __future__ import annotations

import datetime as dt
import re
from typing import Any, Callable

from tesseradb import errors
from tesseradb.errors import UserError

_DATE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")
_DATETIME = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2})(\.\d{1,6})?)?)?"
                       r"(Z|[+-]\d{2}:?\d{2})?")
_TIME = re.compile(r"(-)?(?:(\d+) )?(\d{1,3}):(\d{1,2})(?::(\d{1,2})(\.\d{1,6})?)?")
_DIGITS = re.compile(r"\d{8}(\d{6})?")


def _bad(kind: str, value: Any) -> UserError:
    return UserError(f"Incorrect {kind} value: '{value}'", errors.WrongDateValue)


def _utc(value: dt.datetime) -> dt.datetime:
    return value.astimezone(dt.timezone.utc).replace(tzinfo=None) if value.tzinfo else value


def parse_datetime(value: Any, kind: str = "datetime") -> dt.datetime:
    """Any accepted spelling of a moment, as a naive datetime (UTC when it carried a zone)."""
    if isinstance(value, dt.datetime):
        return _utc(value)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    text = str(value).strip()
    if isinstance(value, int) or _DIGITS.fullmatch(text):
        text = f"{text[:4]}-{text[4:6]}-{text[6:8]}" + (f" {text[8:10]}:{text[10:12]}:{text[12:14]}"
                                                        if len(text) == 14 else "")
    match = _DATETIME.fullmatch(text)
    if match is None:
        raise _bad(kind, value)
    y, mo, d, h, mi, s, frac, zone = match.groups()
    try:
        moment = dt.datetime(int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(s or 0),
                             int(float(frac) * 1_000_000) if frac else 0)
    except ValueError:
        raise _bad(kind, value) from None
    if zone:
        offset = dt.timezone.utc if zone == "Z" else dt.datetime.strptime(zone.replace(":", ""), "%z").tzinfo
        moment = _utc(moment.replace(tzinfo=offset))
    return moment


def datetime_text(value: Any) -> str | None:
    if value is None:
        return None
    moment = parse_datetime(value)
    return moment.isoformat(sep=" ", timespec="microseconds" if moment.microsecond else "seconds")


def date_text(value: Any) -> str | None:
    return None if value is None else parse_datetime(value, "date").date().isoformat()


def time_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, dt.timedelta):
        seconds = int(value.total_seconds())
        sign, seconds = ("-" if seconds < 0 else ""), abs(seconds)
        return f"{sign}{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    if isinstance(value, dt.time):
        return value.isoformat(timespec="microseconds" if value.microsecond else "seconds")
    if isinstance(value, dt.datetime):
        return time_text(value.time())
    match = _TIME.fullmatch(str(value).strip())
    if match is None:
        raise _bad("time", value)
    sign, days, h, mi, s, frac = match.groups()
    hours = int(h) + 24 * int(days or 0)
    if int(mi) > 59 or int(s or 0) > 59 or hours > 838:
        raise _bad("time", value)
    return f"{sign or ''}{hours:02d}:{int(mi):02d}:{int(s or 0):02d}{frac or ''}"


def _read_date(value: Any) -> Any:
    return dt.date.fromisoformat(value) if isinstance(value, str) else value


def _read_datetime(value: Any) -> Any:
    return dt.datetime.fromisoformat(value) if isinstance(value, str) else value


def _read_time(value: Any) -> Any:
    match = _TIME.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        return value
    sign, _, h, mi, s, frac = match.groups()
    delta = dt.timedelta(hours=int(h), minutes=int(mi), seconds=int(s or 0) + float(frac or 0))
    return -delta if sign else delta


WRITERS: dict[str, Callable[[Any], Any]] = {"date": date_text, "datetime": datetime_text, "time": time_text}
READERS: dict[str, Callable[[Any], Any]] = {"DATE_TEXT": _read_date, "DATETIME_TEXT": _read_datetime,
                                            "TIME_TEXT": _read_time}
TEMPORAL_TYPES = ("date", "datetime", "time")
