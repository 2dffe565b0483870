"""Transactions: the implicit transaction, BEGIN/COMMIT/ROLLBACK, failed statements, durability."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import tesseradb
VECTORS = "v float_vector_array knn_type='hnsw' knn_dims='2' hnsw_similarity='l2'"


def rows(con, sql, params=None):
    return con.execute(sql, params).fetchall()


def test_writes_open_a_transaction_that_commit_ends(db_path):
    con = tesseradb.connect(db_path)
    con.execute("CREATE TABLE t (a text)")                   # DDL commits itself (MySQL)
    con.execute("INSERT INTO t (a) VALUES ('x')")
    assert con.in_transaction
    other = tesseradb.connect(db_path)
    assert rows(other, "SHOW TABLES") == [("t",)]
    assert rows(other, "SELECT a FROM t") == []              # the row is not visible before COMMIT
    con.commit()
    assert rows(other, "SELECT a FROM t") == [("x",)]
    con.close()
    other.close()


def test_ddl_commits_the_open_transaction_first(con):
    """MySQL's implicit commit: rows inserted before CREATE/ALTER/DROP/TRUNCATE survive a ROLLBACK,
    and so does the DDL itself."""
    con.execute("CREATE TABLE keep (a text)")
    con.execute("INSERT INTO keep (a) VALUES ('kept')")
    assert con.in_transaction
    con.execute("CREATE TABLE notes (a text)")
    assert not con.in_transaction
    con.execute("INSERT INTO keep (a) VALUES ('gone')")
    con.execute("ALTER TABLE keep ADD COLUMN b int")
    con.execute("INSERT INTO keep (a) VALUES ('gone too')")
    con.rollback()
    assert rows(con, "SELECT a FROM keep") == [("kept",), ("gone",)]
    assert rows(con, "SHOW TABLES") == [("keep",), ("notes",)]
    assert [r[0] for r in rows(con, "DESCRIBE keep")] == ["id", "a", "b"]
    con.execute("BEGIN")
    con.execute("INSERT INTO notes (a) VALUES ('x')")
    con.execute("TRUNCATE TABLE keep")
    con.execute("ROLLBACK")
    assert rows(con, "SELECT a FROM notes") == [("x",)]
    assert rows(con, "SELECT a FROM keep") == []


def test_a_failed_ddl_statement_still_committed_what_came_before(con):
    con.execute("CREATE TABLE t (a text)")
    con.execute("INSERT INTO t (a) VALUES ('x')")
    with pytest.raises(tesseradb.ProgrammingError, match="already exists"):
        con.execute("CREATE TABLE t (b int)")
    con.rollback()
    assert rows(con, "SELECT a FROM t") == [("x",)]


def test_drop_commits_and_cannot_be_rolled_back(con):
    con.execute(f"CREATE TABLE t (a text, {VECTORS})")
    con.execute("INSERT INTO t (id, a, v) VALUES (1, 'x', [[0,0]])")
    con.execute("DROP TABLE t")
    con.rollback()
    assert rows(con, "SHOW TABLES") == []


def test_begin_commit_rollback_statements(con):
    con.execute("CREATE TABLE t (a text)")
    con.execute("COMMIT")
    assert not con.in_transaction
    con.execute("BEGIN")
    assert con.in_transaction
    con.execute("INSERT INTO t (a) VALUES ('rolled back')")
    con.execute("ROLLBACK")
    assert not con.in_transaction
    con.execute("START TRANSACTION")
    con.execute("INSERT INTO t (a) VALUES ('committed')")
    con.execute("COMMIT WORK")
    con.execute("BEGIN WORK")
    con.execute("INSERT INTO t (a) VALUES ('also rolled back')")
    con.execute("ROLLBACK WORK")
    assert rows(con, "SELECT a FROM t") == [("committed",)]


def test_begin_inside_a_transaction_commits_it_first(db_path):
    con = tesseradb.connect(db_path)
    con.execute("CREATE TABLE t (a text)")
    con.execute("INSERT INTO t (a) VALUES ('first')")
    con.execute("BEGIN")                                     # as in MySQL: implicit COMMIT
    con.execute("INSERT INTO t (a) VALUES ('second')")
    con.execute("ROLLBACK")
    assert rows(con, "SELECT a FROM t") == [("first",)]
    con.close()


def test_commit_and_rollback_without_a_transaction_are_harmless(con):
    con.commit()
    con.rollback()
    con.execute("COMMIT")
    con.execute("ROLLBACK")
    assert not con.in_transaction


@pytest.mark.parametrize("bad", [
    "INSERT INTO t (id, a) VALUES (3, 'new'), (1, 'duplicate')",     # duplicate id in the table
    "INSERT INTO t (id, a) VALUES (3, 'x'), (3, 'y')",               # duplicate id in the statement
    "INSERT INTO t (a, n) VALUES ('ok', 1), ('bad', 'not a number')",
    "INSERT INTO t (a, nope) VALUES ('x', 1)",
    "UPDATE t SET n = 'not a number'",
    "INSERT INTO t (a) SELECT a FROM nope",
    "INSERT INTO t (a, v) VALUES ('ok', [[1,1]]), ('bad', [[1,2,3]])",
    "UPDATE t SET v = [[1]] WHERE id = 1",
    "SELEC oops",
])
def test_a_failed_statement_changes_nothing_and_the_transaction_goes_on(con, bad):
    con.execute(f"CREATE TABLE t (a text, n int, {VECTORS})")
    con.execute("INSERT INTO t (id, a, n, v) VALUES (1, 'one', 1, [[0,0]]), (2, 'two', 2, [[5,5]])")
    con.commit()
    con.execute("INSERT INTO t (id, a, n) VALUES (10, 'pending', 10)")
    before = rows(con, "SELECT * FROM t ORDER BY id")
    with pytest.raises(tesseradb.DatabaseError):
        con.execute(bad)
    assert con.in_transaction                                # the open transaction survives
    assert rows(con, "SELECT * FROM t ORDER BY id") == before
    assert rows(con, "SELECT id FROM t WHERE knn(v, 5, (0,0))") == [(1,), (2,)]
    con.execute("INSERT INTO t (id, a) VALUES (11, 'after the error')")
    con.commit()
    assert [r[0] for r in rows(con, "SELECT id FROM t ORDER BY id")] == [1, 2, 10, 11]


def test_a_failed_statement_outside_a_transaction_leaves_none_open(con):
    con.execute("CREATE TABLE t (a int)")
    con.commit()
    with pytest.raises(tesseradb.DataError):
        con.execute("INSERT INTO t (a) VALUES (1), ('x')")
    assert rows(con, "SELECT COUNT(*) FROM t") == [(0,)]


def test_close_without_commit_loses_only_the_uncommitted_work(db_path):
    con = tesseradb.connect(db_path)
    con.execute(f"CREATE TABLE t (a text, {VECTORS})")
    con.execute("INSERT INTO t (id, a, v) VALUES (1, 'committed', [[0,0],[1,1]]), (2, 'committed too', [[2,2]])")
    con.commit()
    query = "SELECT id, knn_dist() FROM t WHERE knn(v, 5, (1,1))"
    committed = rows(con, query)
    con.execute("INSERT INTO t (id, a, v) VALUES (3, 'uncommitted', [[1,1]])")
    con.execute("UPDATE t SET a = 'changed' WHERE id = 1")
    con.execute("DELETE FROM t WHERE id = 2")
    assert rows(con, query) == [(1, 0.0), (3, 0.0)]
    con.close()

    con = tesseradb.connect(db_path)
    assert rows(con, "SELECT id, a FROM t ORDER BY id") == [(1, "committed"), (2, "committed too")]
    assert rows(con, query) == committed == [(1, 0.0), (2, 2.0)]
    assert rows(con, "SHOW TABLES") == [("t",)]
    con.close()


def _run_python(code: str) -> None:
    subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=True, timeout=120)


@pytest.mark.slow                   # a process of its own
def test_nothing_committed_is_lost_when_the_process_dies(db_path):
    """The process is killed (os._exit: no close, no index save) after a commit and during a second
    transaction; reopened, the database has exactly the committed data and finds its vectors."""
    _run_python(f"""
        import os, tesseradb
        con = tesseradb.connect({db_path!r})
        con.execute("CREATE TABLE t (a text, {VECTORS})")
        con.execute("INSERT INTO t (id, a, v) VALUES (1, 'a', [[0,0]]), (2, 'b', [[3,4]])")
        con.commit()
        con.execute("SELECT id FROM t WHERE knn(v, 1, (0,0))").fetchall()
        con.execute("INSERT INTO t (id, a, v) VALUES (3, 'lost', [[0,0]])")
        con.execute("DELETE FROM t WHERE id = 1")
        os._exit(0)
    """)
    con = tesseradb.connect(db_path)
    assert rows(con, "SELECT id, a FROM t ORDER BY id") == [(1, "a"), (2, "b")]
    assert rows(con, "SELECT id, knn_dist() FROM t WHERE knn(v, 5, (0,0))") == [(1, 0.0), (2, 25.0)]
    con.close()


def test_another_connection_sees_committed_tables_and_rows(db_path):
    a, b = tesseradb.connect(db_path), tesseradb.connect(db_path)
    b.execute("SELECT 1")
    a.execute(f"CREATE TABLE t (n int, {VECTORS})")
    a.commit()
    b.execute("INSERT INTO t (id, n, v) VALUES (1, 1, [[0,1]])")     # b learns of the new table
    b.commit()
    assert rows(a, "SELECT id, knn_dist() FROM t WHERE knn(v, 1, (0,1))") == [(1, 0.0)]
    a.execute("DROP TABLE t")
    a.execute(f"CREATE TABLE t (label text, {VECTORS})")
    a.commit()
    b.execute("INSERT INTO t (id, label, v) VALUES (7, 'new table', [[1,1]])")
    b.commit()
    assert rows(a, "SELECT id, label FROM t WHERE knn(v, 5, (1,1))") == [(7, "new table")]
    a.close()
    b.close()


def test_a_transaction_sees_vectors_committed_by_another_connection(db_path):
    a, b = tesseradb.connect(db_path), tesseradb.connect(db_path)
    a.execute(f"CREATE TABLE t ({VECTORS})")
    a.execute("INSERT INTO t (id, v) VALUES (1, [[0,1]])")
    a.commit()
    query = "SELECT id FROM t WHERE knn(v, 5, (0,0))"
    assert rows(b, query) == [(1,)]                           # b has loaded its index
    a.execute("INSERT INTO t (id, v) VALUES (2, [[0,2]])")
    a.execute("DELETE FROM t WHERE id = 1")
    a.commit()
    b.execute("INSERT INTO t (id, v) VALUES (3, [[0,3]])")     # b's own transaction
    assert rows(b, query) == [(2,), (3,)]
    b.rollback()
    assert rows(b, query) == [(2,)]
    a.close()
    b.close()


def test_writers_wait_for_each_other(db_path):
    a = tesseradb.connect(db_path)
    b = tesseradb.connect(db_path, timeout=0.2)
    a.execute("CREATE TABLE t (x int)")
    a.commit()
    a.execute("INSERT INTO t (x) VALUES (1)")
    with pytest.raises(tesseradb.OperationalError) as info:
        b.execute("INSERT INTO t (x) VALUES (2)")
    assert info.value.errno == 1205
    a.commit()
    b.execute("INSERT INTO t (x) VALUES (2)")
    b.commit()
    assert rows(a, "SELECT x FROM t ORDER BY x") == [(1,), (2,)]
    a.close()
    b.close()


def test_a_failed_statement_that_opened_the_transaction_releases_the_write_lock(db_path):
    a, b = tesseradb.connect(db_path), tesseradb.connect(db_path, timeout=0.1)
    a.execute("CREATE TABLE t (x int)")
    a.commit()
    with pytest.raises(tesseradb.DataError):
        a.execute("INSERT INTO t (x) VALUES ('not a number')")
    with pytest.raises(tesseradb.IntegrityError):
        a.executemany("INSERT INTO t (id, x) VALUES (?, ?)", [(1, 1), (1, 2)])
    with pytest.raises(tesseradb.DataError):
        a.executemany("INSERT INTO t (x) VALUES (?)", [(1,), ("y",)])
    with pytest.raises(tesseradb.ProgrammingError):
        a.executemany("DELETE FROM nope WHERE x = ?", [(1,), (2,)])
    assert not a.in_transaction
    b.execute("INSERT INTO t (x) VALUES (5)")                # not blocked by a
    b.commit()
    assert rows(a, "SELECT x FROM t") == [(5,)]
    a.close()
    b.close()
