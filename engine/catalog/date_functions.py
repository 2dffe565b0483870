"""MySQL's date-part functions that sqlglot passes to SQLite by name (``YEAR(DATE(x))``,
``DAY_OF_WEEK(...)``, ``HOUR(x)``) and SQLite lacks. They read DATE/DATETIME text (issue 22); NULL or
a value that is not a date gives NULL, as in MySQL (which also warns)."""
from __future__ import annotations

import calendar
import datetime as dt
from typing import Any, Callable

from tesseradb.catalog.temporal_values import datetime_text, parse_datetime
from tesseradb.errors import UserError


def _moment(value: Any) -> dt.datetime | None:
    if value is None:
        return None
    try:
        return parse_datetime(value)
    except UserError:
        return None


def _part(get: Callable[[dt.datetime], Any]) -> Callable[[Any], Any]:
    def fn(value: Any) -> Any:
        moment = _moment(value)
        return None if moment is None else get(moment)
    return fn


def _time_part(index: int) -> Callable[[Any], Any]:
    """HOUR/MINUTE/SECOND also read a TIME ('838:59:59')."""
    def fn(value: Any) -> Any:
        if isinstance(value, str) and value.count(":") == 2 and "-" not in value.lstrip("-")[:5]:
            try:
                return int(float(value.lstrip("-").split(":")[index]))
            except ValueError:
                return None
        moment = _moment(value)
        return None if moment is None else (moment.hour, moment.minute, moment.second)[index]
    return fn


def _last_day(m: dt.datetime) -> str:
    return m.date().replace(day=calendar.monthrange(m.year, m.month)[1]).isoformat()


TIMESTAMP_OF = "_tessera_timestamp_of"      # sql/temporal.py wraps parameters compared with dates in these
DATETIME_OF = "_tessera_datetime_of"


def unix_seconds(value: Any) -> int:
    return calendar.timegm(parse_datetime(value).timetuple())


def timestamp_of(value: Any) -> Any:
    """A bound value compared with a timestamp column, as Unix seconds (a bad date: ERROR 1292)."""
    if value is None or isinstance(value, (int, float)):
        return value
    text = str(value).strip()
    return int(text) if text.lstrip("-").isdigit() and len(text) != 8 else unix_seconds(text)


def datetime_of(value: Any) -> Any:
    """A bound value compared with a DATETIME column, in its stored form."""
    return value if value is None or isinstance(value, (int, float)) else datetime_text(value)


FUNCTIONS: dict[str, tuple[Any, int]] = {
    TIMESTAMP_OF: (timestamp_of, 1),
    DATETIME_OF: (datetime_of, 1),
    "year": (_part(lambda m: m.year), 1),
    "month": (_part(lambda m: m.month), 1),
    "day": (_part(lambda m: m.day), 1),
    "day_of_month": (_part(lambda m: m.day), 1),
    "dayofmonth": (_part(lambda m: m.day), 1),
    "day_of_week": (_part(lambda m: m.isoweekday() % 7 + 1), 1),      # 1 = Sunday, as MySQL
    "day_of_year": (_part(lambda m: m.timetuple().tm_yday), 1),
    "weekday": (_part(lambda m: m.weekday()), 1),                      # 0 = Monday
    "quarter": (_part(lambda m: (m.month - 1) // 3 + 1), 1),
    "dayname": (_part(lambda m: calendar.day_name[m.weekday()]), 1),
    "last_day": (_part(_last_day), 1),
    "hour": (_time_part(0), 1),
    "minute": (_time_part(1), 1),
    "second": (_time_part(2), 1),
}
