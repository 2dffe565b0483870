"""sql_mode's lexing flags (NO_BACKSLASH_ESCAPES, ANSI_QUOTES) change how the DB-API reads text, and
INTO OUTFILE is a clause only outside strings, quoted names and comments (issue 21)."""
from __future__ import annotations

import os

import pytest

import tesseradb

QUOTED_OUTFILE = [
    ("SELECT 'INTO OUTFILE ''p.csv''' AS a", "INTO OUTFILE 'p.csv'"),
    ("SELECT \"INTO OUTFILE '{d}/x.csv'\" AS a", "INTO OUTFILE '{d}/x.csv'"),
    ("SELECT 'INTO OUTFILE \\'{d}/x.csv\\'' AS a", "INTO OUTFILE '{d}/x.csv'"),
    ("SELECT 1 AS `into outfile '{d}/x.csv'`", 1),
    ("SELECT 1 AS a /* INTO OUTFILE '{d}/x.csv' */", 1),
    ("SELECT 1 AS a -- INTO OUTFILE '{d}/x.csv'\n", 1),
    ("SELECT 1 AS a # INTO OUTFILE '{d}/x.csv'\n", 1),
]


@pytest.mark.parametrize("sql, value", QUOTED_OUTFILE)
def test_into_outfile_inside_a_literal_or_comment_is_text(tmp_path, sql, value):
    con = tesseradb.connect()
    d = str(tmp_path)
    got = con.execute(sql.format(d=d)).fetchall()
    assert got == [(value.format(d=d) if isinstance(value, str) else value,)]
    assert not os.path.exists(tmp_path / "x.csv")


def test_a_value_that_mentions_into_outfile_is_stored(tmp_path):
    con = tesseradb.connect()
    con.execute("CREATE TABLE t (s string)")
    con.execute("INSERT INTO t (s) VALUES ('see: into outfile ''a.csv''')")
    assert con.execute("SELECT s FROM t").fetchall() == [("see: into outfile 'a.csv'",)]
    out = tmp_path / "o.csv"
    con.execute(f"SELECT s FROM t INTO OUTFILE '{out}'")
    assert "see: into outfile" in out.read_text()


def test_into_dumpfile_is_refused_not_ignored(tmp_path):
    con = tesseradb.connect()
    with pytest.raises(tesseradb.ProgrammingError) as info:
        con.execute(f"SELECT 1 INTO DUMPFILE '{tmp_path}/d.bin'")
    assert info.value.errno == 1064
    assert not os.path.exists(tmp_path / "d.bin")


READINGS = [
    # (sql_mode, text, what it means)
    ("", r"SELECT 'a\'b'", "a'b"),
    ("", r"SELECT 'a\\b'", "a\\b"),
    ("", "SELECT \"it\"\"s\"", 'it"s'),
    ("NO_BACKSLASH_ESCAPES", r"SELECT 'a\\b'", "a\\\\b"),
    ("NO_BACKSLASH_ESCAPES", r"SELECT 'a\nb'", "a\\nb"),
    ("NO_BACKSLASH_ESCAPES", r"SELECT 'it''s\'", "it's\\"),
    ("NO_BACKSLASH_ESCAPES", r"SELECT CONCAT('\', 'x')", "\\x"),
    ("ANSI_QUOTES", "SELECT 'a' AS \"col name\"", "a"),
    ("ANSI_QUOTES,NO_BACKSLASH_ESCAPES", "SELECT 'x\\' AS \"q\"", "x\\"),
]


@pytest.mark.parametrize("mode, sql, value", READINGS)
def test_sql_mode_decides_how_strings_are_read(mode, sql, value):
    con = tesseradb.connect()
    con.sql_mode = mode
    assert con.execute(sql).fetchall() == [(value,)]


def test_ansi_quotes_makes_double_quotes_names():
    con = tesseradb.connect()
    con.execute("CREATE TABLE t (s string)")
    con.execute("INSERT INTO t (s) VALUES ('v')")
    con.execute("SET sql_mode = 'ANSI_QUOTES'")
    cur = con.execute('SELECT "s" FROM "t"')
    assert cur.fetchall() == [("v",)]
    con.execute("SET sql_mode = ''")
    assert con.execute('SELECT "s" FROM t').fetchall() == [("s",)]


def test_a_backslash_cannot_end_a_string_early_under_no_backslash_escapes():
    """What mysql-connector sends for a parameter under NO_BACKSLASH_ESCAPES (quotes doubled,
    backslashes as they are) must stay one string."""
    con = tesseradb.connect(autocommit=True)
    con.execute("CREATE TABLE t (s string)")
    con.execute("INSERT INTO t (s) VALUES ('keep')")
    con.sql_mode = "NO_BACKSLASH_ESCAPES"
    hostile = "\\'; DELETE FROM t; -- "
    sql = "SELECT '" + hostile.replace("'", "''") + "' AS v"
    assert con.execute(sql).fetchall() == [(hostile,)]
    con.executescript("INSERT INTO t (s) VALUES ('a\\'); INSERT INTO t (s) VALUES ('b');")
    assert con.execute("SELECT s FROM t ORDER BY s").fetchall() == [("a\\",), ("b",), ("keep",)]


def test_the_mode_list_is_checked_and_canonical():
    con = tesseradb.connect()
    with pytest.raises(tesseradb.ProgrammingError) as info:
        con.execute("SET sql_mode = 'NO_BACKSLASH_ESCAPES,NOPE'")
    assert info.value.errno == 1231 and "'NOPE'" in info.value.msg
    assert con.lexing.no_backslash_escapes is False
    con.execute("SET sql_mode = 'ansi'")
    assert con.sql_mode == "REAL_AS_FLOAT,PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ONLY_FULL_GROUP_BY,ANSI"
    assert con.lexing.ansi_quotes is True
    with pytest.raises(tesseradb.ProgrammingError):
        con.sql_mode = "STRICT"
    assert con.sql_mode.endswith("ANSI")


def test_an_unterminated_string_in_the_mode_is_a_syntax_error():
    con = tesseradb.connect()
    con.sql_mode = "NO_BACKSLASH_ESCAPES"
    with pytest.raises(tesseradb.ProgrammingError) as info:
        con.execute("SELECT 'a\\'b'")           # 'a\' then b' : an unterminated string in this mode
    assert info.value.errno == 1064
