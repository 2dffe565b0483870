"""MySQL's DATE / DATETIME / TIME through the DB-API, Arrow and pandas, timestamp comparisons with
Python datetimes, and the one-time conversion of a previous release's files (issue 22)."""
from __future__ import annotations

import datetime as dt
import json
import logging

import apsw
import pytest

import tesseradb


@pytest.fixture
def events(con):
    con.execute("CREATE TABLE ev (name VARCHAR(20), created_at DATETIME, day DATE, at TIME, ts TIMESTAMP)")
    con.execute("INSERT INTO ev (name, created_at, day, at, ts) VALUES (?, ?, ?, ?, ?)",
                ("old", dt.datetime(2023, 5, 6, 7, 8, 9), dt.date(2023, 5, 6), dt.time(7, 8, 9),
                 dt.datetime(2023, 5, 6, 7, 8, 9)))
    con.execute("INSERT INTO ev (name, created_at, day, at, ts) VALUES "
                "('new', '2025-06-01 10:00:00', '2025-06-01', '10:30:00', '2025-06-01 10:00:00')")
    return con


def test_python_dates_go_in_and_come_back(events):
    got = events.execute("SELECT created_at, day, at, ts FROM ev WHERE name = 'old'").fetchone()
    assert got == (dt.datetime(2023, 5, 6, 7, 8, 9), dt.date(2023, 5, 6),
                   dt.timedelta(hours=7, minutes=8, seconds=9), 1683356889)


def test_an_aware_datetime_is_stored_in_utc(con):
    con.execute("CREATE TABLE t (at DATETIME)")
    zone = dt.timezone(dt.timedelta(hours=2))
    con.execute("INSERT INTO t (at) VALUES (?)", (dt.datetime(2024, 1, 1, 12, 0, tzinfo=zone),))
    assert con.execute("SELECT at FROM t").fetchone() == (dt.datetime(2024, 1, 1, 10, 0),)


def test_comparisons_with_python_datetimes(events):
    since = dt.datetime(2024, 1, 1)
    assert events.execute("SELECT name FROM ev WHERE created_at > ?", (since,)).fetchall() == [("new",)]
    assert events.execute("SELECT name FROM ev WHERE day < ?", (dt.date(2024, 1, 1),)).fetchall() == [("old",)]
    # a timestamp (Unix seconds) compared with a datetime or a date string: converted, not empty
    assert events.execute("SELECT name FROM ev WHERE ts > ?", (since,)).fetchall() == [("new",)]
    assert events.execute("SELECT name FROM ev WHERE ts > ?", ("2024-01-01",)).fetchall() == [("new",)]
    assert events.execute("SELECT name FROM ev WHERE ts > '2024-01-01'").fetchall() == [("new",)]
    with pytest.raises(tesseradb.DataError, match="Incorrect datetime value: 'soon'") as info:
        events.execute("SELECT name FROM ev WHERE ts > ?", ("soon",))
    assert info.value.errno == 1292


def test_bad_dates_are_errors_and_change_nothing(events):
    with pytest.raises(tesseradb.DataError, match="Incorrect date value: '2024-02-30'"):
        events.execute("INSERT INTO ev (name, day) VALUES ('x', '2024-02-30'), ('y', '2024-02-01')")
    assert events.execute("SELECT COUNT(*) FROM ev").fetchone() == (2,)


def test_arrow_and_pandas_see_dates(events):
    table = events.execute("SELECT created_at, day FROM ev ORDER BY day").fetch_arrow_table()
    assert str(table.schema.field("created_at").type).startswith("timestamp")
    assert str(table.schema.field("day").type) == "date32[day]"
    frame = events.execute("SELECT created_at FROM ev ORDER BY day").fetchdf()
    assert str(frame["created_at"].dtype).startswith("datetime64")
    assert frame["created_at"][0] == dt.datetime(2023, 5, 6, 7, 8, 9)


def _as_previous_release(path: str) -> None:
    """Give a file the shape the previous release wrote: DATETIME/DATE declared, Unix seconds stored."""
    con = tesseradb.connect(path)
    con.execute("CREATE TABLE ev (name TEXT, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, day TIMESTAMP)")
    con.execute("INSERT INTO ev (name, created_at, day) VALUES ('a', 1796139220, 1704067200), ('b', NULL, NULL)")
    con.commit()
    con.close()
    raw = apsw.Connection(path)
    (text,) = next(raw.execute("SELECT definition FROM _tessera_catalog WHERE name = 'ev'"))
    definition = json.loads(text)
    for col in definition["columns"]:
        col[2] = {"created_at": "datetime", "day": "date"}.get(col[0], col[2])
    del definition["mysql_dates"]                    # that release did not mark its tables
    raw.execute("UPDATE _tessera_catalog SET definition = ? WHERE name = 'ev'", (json.dumps(definition),))
    raw.close()


def test_a_previous_release_file_is_converted_once_on_open(db_path, caplog):
    _as_previous_release(db_path)
    with caplog.at_level(logging.WARNING, logger="tesseradb.dates"):
        con = tesseradb.connect(db_path)
    assert "ev.created_at (datetime)" in caplog.text and "ev.day (date)" in caplog.text
    assert con.execute("SELECT name, created_at, day FROM ev ORDER BY name").fetchall() == [
        ("a", dt.datetime(2026, 12, 1, 15, 33, 40), dt.date(2024, 1, 1)), ("b", None, None)]
    assert con.execute("SELECT name FROM ev WHERE created_at > '2024-01-01'").fetchall() == [("a",)]
    con.execute("INSERT INTO ev (name) VALUES ('c')")       # the default is now a DATETIME too
    (created,) = con.execute("SELECT created_at FROM ev WHERE name = 'c'").fetchone()
    assert isinstance(created, dt.datetime)
    con.commit()
    con.close()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="tesseradb.dates"):
        again = tesseradb.connect(db_path)
    assert caplog.text == ""                                 # once
    assert again.execute("SELECT day FROM ev WHERE name = 'a'").fetchone() == (dt.date(2024, 1, 1),)
    again.close()
    raw = apsw.Connection(db_path)
    assert list(raw.execute("PRAGMA integrity_check")) == [("ok",)]
    raw.close()
