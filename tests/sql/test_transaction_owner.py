"""One owner for transactions (issue 31 item 3): whether a statement commits implicitly is its planner
entry's fact; run and run_many share one statement bracket; the connection owns autocommit."""
from __future__ import annotations

import pytest

import tesseradb
from tesseradb.grammar import parse
from tesseradb.sql import planner


@pytest.mark.parametrize("sql, commits", [
    ("CREATE TABLE x (a int)", True), ("DROP TABLE t", True), ("TRUNCATE TABLE t", True),
    ("ALTER TABLE t ADD COLUMN b int", True), ("CREATE VIEW w AS SELECT 1", True),
    ("SET autocommit = 1", True), ("SET autocommit = ON", True), ("SET autocommit = 0", False),
    ("SET @x = 1", False), ("SET sql_mode = ''", False), ("INSERT INTO t (a) VALUES (1)", False),
    ("SELECT 1", False), ("OPTIMIZE TABLE t", False), ("BEGIN", False),
])
def test_the_implicit_commit_is_a_fact_of_the_planner_entry(sql, commits):
    assert planner.commits(parse(sql)) is commits


@pytest.fixture
def con(tmp_path):
    con = tesseradb.connect(str(tmp_path / "t.db"))
    con.execute("CREATE TABLE t (a int)")
    yield con
    con.close()


def _count(path) -> int:
    other = tesseradb.connect(path)
    try:
        return other.execute("SELECT COUNT(*) FROM t").fetchone()[0]
    finally:
        other.close()


def test_switching_autocommit_on_commits_the_open_transaction(con, tmp_path):
    con.execute("INSERT INTO t (a) VALUES (1)")
    assert con.in_transaction and _count(str(tmp_path / "t.db")) == 0
    con.autocommit = True
    assert not con.in_transaction and _count(str(tmp_path / "t.db")) == 1
    con.execute("INSERT INTO t (a) VALUES (2)")              # committed at once
    assert not con.in_transaction and _count(str(tmp_path / "t.db")) == 2


def test_switching_it_on_inside_begin_commits_too(con, tmp_path):
    con.autocommit = True
    con.execute("BEGIN")
    con.execute("INSERT INTO t (a) VALUES (1)")
    con.execute("SET @x = 5")                                # not a commit: BEGIN's transaction goes on
    assert con.in_transaction
    con.autocommit = True
    assert not con.in_transaction and _count(str(tmp_path / "t.db")) == 1


def test_switching_it_off_commits_nothing(con, tmp_path):
    con.autocommit = True
    con.execute("BEGIN")
    con.execute("INSERT INTO t (a) VALUES (1)")
    con.autocommit = False
    assert con.in_transaction
    con.rollback()
    assert _count(str(tmp_path / "t.db")) == 0


def test_a_failed_batch_is_undone_as_a_failed_statement_is(con):
    con.execute("INSERT INTO t (a) VALUES (1)")
    with pytest.raises(tesseradb.Error):
        con.executemany("UPDATE t SET a = ? WHERE a = 1", [(2,), ("x'",), (object(),)])
    assert con.in_transaction                                 # the earlier INSERT's transaction stays
    assert con.execute("SELECT a FROM t").fetchall() == [(1,)]
    con.rollback()
    with pytest.raises(tesseradb.Error):
        con.executemany("UPDATE t SET a = ? WHERE a = 1", [(2,), (object(),)])
    assert not con.in_transaction                             # the batch opened it: rolled back, unlocked
