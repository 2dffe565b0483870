"""SHOW WARNINGS and Connection.warnings follow MySQL: each statement replaces the list; after a
failed statement the list holds its error."""
from __future__ import annotations

import pytest

import tesseradb
def test_failed_statement_is_listed_as_an_error(cur):
    cur.execute("CREATE TABLE t (n int)")
    with pytest.raises(tesseradb.ProgrammingError):
        cur.execute("SELECT nope FROM t")
    assert cur.execute("SHOW WARNINGS").fetchall() == [("Error", 1054, "Unknown column 'nope' in 'field list'")]


def test_next_statement_clears_the_list(con, cur):
    cur.execute("DROP TABLE IF EXISTS missing")
    assert con.warnings == [("Note", 1051, "Unknown table 'missing'")]
    cur.execute("SELECT 1")
    assert cur.execute("SHOW WARNINGS").fetchall() == []


def test_show_warnings_does_not_clear_the_list(cur):
    cur.execute("DROP TABLE IF EXISTS missing")
    first = cur.execute("SHOW WARNINGS").fetchall()
    assert first == cur.execute("SHOW WARNINGS").fetchall() != []
