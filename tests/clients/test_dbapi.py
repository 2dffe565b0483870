"""PEP 249 (DB-API 2.0): module globals, Connection, Cursor, parameters, fetching, Arrow."""
from __future__ import annotations

import datetime

import numpy as np
import pyarrow as pa
import pytest

import tesseradb
@pytest.fixture
def people(con):
    cur = con.cursor()
    cur.execute("CREATE TABLE people (name string, age int, score float, ok bool)")
    cur.executemany("INSERT INTO people (name, age, score, ok) VALUES (?, ?, ?, ?)",
                    [("ann", 31, 1.5, True), ("bob", 25, 2.5, False), ("cid", 40, None, None),
                     ("dee", 19, 0.25, True), ("eve", 52, 9.0, False)])
    con.commit()
    return cur


# -- module ---------------------------------------------------------------------------------------
def test_module_globals():
    assert tesseradb.apilevel == "2.0"
    assert tesseradb.threadsafety == 1
    assert tesseradb.paramstyle == "qmark"


def test_exception_tree_is_pep_249():
    assert issubclass(tesseradb.Error, Exception)
    assert issubclass(tesseradb.Warning, Exception)
    for cls in (tesseradb.InterfaceError, tesseradb.DatabaseError):
        assert issubclass(cls, tesseradb.Error)
    for cls in (tesseradb.DataError, tesseradb.OperationalError, tesseradb.IntegrityError, tesseradb.InternalError,
                tesseradb.ProgrammingError, tesseradb.NotSupportedError):
        assert issubclass(cls, tesseradb.DatabaseError)


def test_connection_carries_the_exception_classes(con):
    assert con.Error is tesseradb.Error
    assert con.IntegrityError is tesseradb.IntegrityError
    assert con.ProgrammingError is tesseradb.ProgrammingError


def test_type_objects_compare_with_description(people):
    people.execute("SELECT id, name, age, score, ok FROM people")
    codes = [d[1] for d in people.description]
    assert codes[0] == tesseradb.NUMBER and codes[0] == tesseradb.ROWID
    assert codes[1] == tesseradb.STRING and codes[1] != tesseradb.NUMBER
    assert codes[2] == tesseradb.NUMBER and codes[3] == tesseradb.NUMBER
    assert tesseradb.Binary(b"x") == b"x"
    assert tesseradb.Date(2024, 1, 2) == datetime.date(2024, 1, 2)
    assert tesseradb.TimestampFromTicks(0) == datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def test_connect_defaults_to_memory():
    con = tesseradb.connect()
    try:
        assert con.execute("SELECT 1 + 1").fetchone() == (2,)
    finally:
        con.close()


def test_two_memory_connections_are_separate():
    a, b = tesseradb.connect(":memory:"), tesseradb.connect(":memory:")
    try:
        a.execute("CREATE TABLE t (x int)")
        with pytest.raises(tesseradb.ProgrammingError):
            b.execute("SELECT * FROM t")
    finally:
        a.close()
        b.close()


# -- parameters -----------------------------------------------------------------------------------
def test_qmark_parameters(people):
    people.execute("SELECT name FROM people WHERE age > ? AND score < ? ORDER BY name", (20, 5))
    assert people.fetchall() == [("ann",), ("bob",)]


def test_named_parameters(people):
    people.execute("SELECT name FROM people WHERE age > :lo AND age < :hi ORDER BY name", {"lo": 20, "hi": 35})
    assert people.fetchall() == [("ann",), ("bob",)]
    people.execute("SELECT :x + :x", {"x": 2})
    assert people.fetchone() == (4,)


def test_parameters_are_bound_never_pasted(con):
    cur = con.cursor()
    cur.execute("CREATE TABLE t (s text)")
    evil = "x'); DROP TABLE t; --"
    cur.execute("INSERT INTO t (s) VALUES (?)", [evil])
    assert cur.execute("SELECT s FROM t").fetchall() == [(evil,)]
    assert cur.execute("SELECT COUNT(*) FROM t WHERE s = ?", [evil]).fetchone() == (1,)
    cur.execute("SELECT ?", ["?"])
    assert cur.fetchone() == ("?",)


@pytest.mark.parametrize("sql, params, message", [
    ("SELECT ?", None, "the statement uses 1, and there are 0 supplied"),
    ("SELECT ?", [], "the statement uses 1, and there are 0 supplied"),
    ("SELECT ?, ?", [1], "the statement uses 2, and there are 1 supplied"),
    ("SELECT 1", [1], "the statement uses 0, and there are 1 supplied"),
    ("SELECT ?", {"a": 1}, "the statement uses 1, and there are 1 supplied"),
    ("SELECT :a", [1], "named parameters need a mapping of values"),
    ("SELECT :a, :b", {"a": 1}, "You did not supply a value for binding parameter :b"),
    ("SELECT ?, :a", [1, 2], "cannot mix ? and :name parameters"),
])
def test_parameter_count_errors(cur, sql, params, message):
    with pytest.raises(tesseradb.ProgrammingError) as info:
        cur.execute(sql, params)
    assert message in str(info.value)
    assert info.value.errno == 1064


def test_unsupported_parameter_type_is_a_programming_error(cur):
    with pytest.raises(tesseradb.ProgrammingError, match="Error binding parameter"):
        cur.execute("SELECT ?", [object()])


def test_numpy_scalars_bind_as_numbers(people):
    people.execute("SELECT name FROM people WHERE id = ?", [np.int64(2)])
    assert people.fetchall() == [("bob",)]
    people.execute("SELECT ?, ?, ?", [np.float32(0.5), np.int32(7), np.bool_(True)])
    assert people.fetchone() == (0.5, 7, 1)


def test_datetime_parameters_bind_as_unix_seconds(con):
    cur = con.cursor()
    cur.execute("CREATE TABLE ev (at timestamp)")
    cur.execute("INSERT INTO ev (at) VALUES (?), (?), (?)",
                [datetime.datetime(2024, 1, 2, 3, 4, 5), datetime.date(2024, 1, 1),
                 datetime.datetime(2024, 1, 1, 2, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))])
    assert cur.execute("SELECT at FROM ev ORDER BY id").fetchall() == [(1704164645,), (1704067200,), (1704067200,)]
    cur.execute("SELECT COUNT(*) FROM ev WHERE at >= ?", [datetime.datetime(2024, 1, 2)])
    assert cur.fetchone() == (1,)


def test_json_parameters(con):
    cur = con.cursor()
    cur.execute("CREATE TABLE j (doc json)")
    cur.execute("INSERT INTO j (doc) VALUES (?), (?), (?)", [{"a": [1, 2]}, [1, "x"], '{"text": true}'])
    cur.execute("UPDATE j SET doc = ? WHERE id = 2", [{"b": None}])
    assert cur.execute("SELECT doc FROM j ORDER BY id").fetchall() == \
        [({"a": [1, 2]},), ({"b": None},), ({"text": True},)]
    with pytest.raises(tesseradb.DataError, match="Invalid JSON text for column 'doc'"):
        cur.execute("INSERT INTO j (doc) VALUES (?)", ["not json"])


# -- execute, executemany, executescript -----------------------------------------------------------
def test_execute_returns_the_cursor(con):
    cur = con.cursor()
    assert cur.execute("SELECT 1") is cur
    assert cur.connection is con


def test_connection_execute_shortcut(con):
    cur = con.execute("SELECT ?", [5])
    assert isinstance(cur, tesseradb.Cursor)
    assert cur.fetchall() == [(5,)]


def test_executemany_insert(con):
    cur = con.cursor()
    cur.execute("CREATE TABLE t (a text, n int)")
    cur.executemany("INSERT INTO t (a, n) VALUES (?, ?)", [("x", 1), ("y", 2), ("z", 3)])
    assert cur.rowcount == 3
    assert cur.lastrowid == 3
    cur.executemany("INSERT INTO t (a, n) VALUES (:a, :n)", iter([{"a": "p", "n": 4}]))
    assert cur.rowcount == 1
    assert cur.execute("SELECT a, n FROM t ORDER BY id").fetchall() == [("x", 1), ("y", 2), ("z", 3), ("p", 4)]


def test_executemany_update_sums_rowcounts(people):
    people.executemany("UPDATE people SET age = age + 1 WHERE name = ?", [("ann",), ("bob",), ("nobody",)])
    assert people.rowcount == 2


def test_executemany_is_all_or_nothing(people, con):
    with pytest.raises(tesseradb.IntegrityError):
        people.executemany("INSERT INTO people (id, name) VALUES (?, ?)", [(10, "a"), (11, "b"), (10, "c")])
    with pytest.raises(tesseradb.DataError):
        people.executemany("UPDATE people SET age = ? WHERE name = ?", [(1, "ann"), ("old", "bob")])
    assert people.execute("SELECT COUNT(*) FROM people").fetchone() == (5,)
    assert people.execute("SELECT age FROM people WHERE name = 'ann'").fetchone() == (31,)


def test_executemany_with_no_rows(con):
    cur = con.cursor()
    cur.execute("CREATE TABLE t (a text)")
    cur.executemany("INSERT INTO t (a) VALUES (?)", [])
    assert cur.rowcount == 0


def test_executescript(con):
    cur = con.executescript("""
        CREATE TABLE s (a text);  -- a comment; with a semicolon
        INSERT INTO s (a) VALUES ('x;y');
        INSERT INTO s (a) VALUES ('z');
    """)
    assert isinstance(cur, tesseradb.Cursor)
    assert con.execute("SELECT a FROM s ORDER BY id").fetchall() == [("x;y",), ("z",)]


def test_executescript_stops_at_the_first_error(con):
    with pytest.raises(tesseradb.ProgrammingError):
        con.executescript("CREATE TABLE s (a text); INSERT INTO s (b) VALUES (1); INSERT INTO s (a) VALUES ('never')")
    assert con.execute("SELECT COUNT(*) FROM s").fetchone() == (0,)


# -- results ----------------------------------------------------------------------------------------
def test_rowcount_and_lastrowid(con):
    cur = con.cursor()
    assert cur.rowcount == -1 and cur.lastrowid is None
    cur.execute("CREATE TABLE t (a text)")
    assert cur.rowcount == 0
    cur.execute("INSERT INTO t (a) VALUES ('a'), ('b'), ('c')")
    assert (cur.rowcount, cur.lastrowid) == (3, 3)
    cur.execute("INSERT INTO t (id, a) VALUES (100, 'd')")
    assert (cur.rowcount, cur.lastrowid) == (1, 100)
    cur.execute("REPLACE INTO t (id, a) VALUES (100, 'e')")
    assert (cur.rowcount, cur.lastrowid) == (2, 100)          # MySQL: 1 deleted + 1 inserted
    cur.execute("UPDATE t SET a = 'z' WHERE id < 3")
    assert cur.rowcount == 2
    cur.execute("UPDATE t SET a = 'z' WHERE id > 1000")
    assert cur.rowcount == 0
    cur.execute("DELETE FROM t WHERE id IN (1, 100)")
    assert cur.rowcount == 2
    cur.execute("SELECT * FROM t")
    assert cur.rowcount == 2 and cur.lastrowid is None


def test_description(people):
    assert people.connection.cursor().description is None
    people.execute("SELECT name, age AS years, COUNT(*) FROM people GROUP BY name, years")
    desc = people.description
    assert [d[0] for d in desc] == ["name", "years", "COUNT(*)"]
    assert all(len(d) == 7 for d in desc)
    people.execute("UPDATE people SET age = 1 WHERE 0")
    assert people.description is None


def test_description_of_an_empty_result(people):
    people.execute("SELECT name, age FROM people WHERE 0")
    assert [d[0] for d in people.description] == ["name", "age"]
    assert people.fetchall() == []


def test_fetch_methods(people):
    people.execute("SELECT name FROM people ORDER BY id")
    assert people.fetchone() == ("ann",)
    assert people.fetchmany() == [("bob",)]                  # arraysize defaults to 1
    assert people.fetchmany(2) == [("cid",), ("dee",)]
    assert people.fetchall() == [("eve",)]
    assert people.fetchone() is None
    assert people.fetchmany(3) == []
    assert people.fetchall() == []


def test_arraysize(people):
    assert people.arraysize == 1
    people.arraysize = 3
    people.execute("SELECT name FROM people ORDER BY id")
    assert people.fetchmany() == [("ann",), ("bob",), ("cid",)]
    assert people.fetchmany() == [("dee",), ("eve",)]


def test_iteration(people):
    names = [row[0] for row in people.execute("SELECT name FROM people ORDER BY id")]
    assert names == ["ann", "bob", "cid", "dee", "eve"]
    people.execute("SELECT name FROM people ORDER BY id")
    people.fetchone()
    assert list(people) == [("bob",), ("cid",), ("dee",), ("eve",)]


def test_rows_are_tuples_of_python_types(people):
    row = people.execute("SELECT id, name, age, score, ok FROM people WHERE name = 'ann'").fetchone()
    assert row == (1, "ann", 31, 1.5, True)
    assert type(row) is tuple
    assert [type(v) for v in row] == [int, str, int, float, bool]


def test_a_new_execute_discards_the_old_result(people):
    people.execute("SELECT name FROM people")
    people.execute("SELECT 42")
    assert people.fetchall() == [(42,)]


@pytest.mark.parametrize("fetch", ["fetchone", "fetchall", "fetchmany"])
def test_fetch_without_a_result_set(con, fetch):
    cur = con.cursor()
    with pytest.raises(tesseradb.ProgrammingError, match="no result set"):
        getattr(cur, fetch)()
    cur.execute("CREATE TABLE t (a int)")
    with pytest.raises(tesseradb.ProgrammingError, match="no result set"):
        getattr(cur, fetch)()


def test_setinputsizes_and_setoutputsize_are_accepted(cur):
    cur.setinputsizes([10, None])
    cur.setoutputsize(100)
    cur.setoutputsize(100, 0)


def test_fetch_arrow_table(people):
    people.execute("SELECT id, name, age, score, ok FROM people ORDER BY id")
    people.fetchone()
    table = people.fetch_arrow_table()
    assert isinstance(table, pa.Table)
    assert table.column_names == ["id", "name", "age", "score", "ok"]
    assert table.num_rows == 4                                 # the rows not fetched yet
    assert table.column("name").to_pylist() == ["bob", "cid", "dee", "eve"]
    assert table.column("score").to_pylist() == [2.5, None, 0.25, 9.0]
    assert table.schema.field("age").type == pa.int64()
    assert table.column("ok").to_pylist() == [False, None, True, False]
    assert people.fetchall() == []


def test_fetch_arrow_table_of_vectors(con):
    cur = con.cursor()
    cur.execute("CREATE TABLE v (e float_vector_array knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')")
    cur.execute("INSERT INTO v (id, e) VALUES (1, [[1,2],[3,4]]), (2, [[5,6]])")
    table = cur.execute("SELECT id, e, knn_dist() FROM v WHERE knn(e, 2, (1,2))").fetch_arrow_table()
    assert table.column("e").to_pylist() == [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0]]]
    assert table.column_names == ["id", "e", "knn_dist()"]


def test_fetch_arrow_table_without_a_result_set(con):
    with pytest.raises(tesseradb.ProgrammingError):
        con.cursor().fetch_arrow_table()


# -- closing -----------------------------------------------------------------------------------------
def test_closed_cursor(con):
    cur = con.cursor()
    cur.execute("SELECT 1")
    cur.close()
    cur.close()                                              # closing twice is fine
    for call in (lambda: cur.execute("SELECT 1"), cur.fetchone, cur.fetchall, lambda: cur.fetchmany(1),
                 lambda: cur.executemany("SELECT ?", [[1]])):
        with pytest.raises(tesseradb.InterfaceError, match="closed cursor") as info:
            call()
        assert info.value.errno == 2000
    assert con.execute("SELECT 2").fetchone() == (2,)          # the connection is unaffected


def test_closed_connection():
    con = tesseradb.connect()
    cur = con.cursor()
    cur.execute("SELECT 1")                                  # a result left to fetch: not after close
    con.close()
    con.close()                                              # closing twice is fine
    assert con.closed
    for call in (con.cursor, con.commit, con.rollback, lambda: con.execute("SELECT 1"),
                 lambda: cur.execute("SELECT 1"), lambda: con.executescript("SELECT 1"), cur.fetchall,
                 cur.fetchone, lambda: cur.fetchmany(1)):
        with pytest.raises(tesseradb.InterfaceError, match="closed database"):
            call()


# -- transactions through the API ---------------------------------------------------------------------
def test_context_manager_commits(db_path):
    with tesseradb.connect(db_path) as con:
        con.execute("CREATE TABLE t (a text)")
        con.execute("INSERT INTO t (a) VALUES ('kept')")
    assert not con.closed                                    # like sqlite3: the block ends the transaction only
    con.close()
    with tesseradb.connect(db_path) as again:
        assert again.execute("SELECT a FROM t").fetchall() == [("kept",)]
    again.close()


def test_context_manager_rolls_back_on_error(db_path):
    con = tesseradb.connect(db_path)
    con.execute("CREATE TABLE t (a text)")
    con.commit()
    with pytest.raises(RuntimeError):
        with con:
            con.execute("INSERT INTO t (a) VALUES ('lost')")
            raise RuntimeError("boom")
    assert con.execute("SELECT COUNT(*) FROM t").fetchone() == (0,)
    con.close()


def test_in_transaction(con):
    assert not con.in_transaction
    con.execute("SELECT 1")
    assert not con.in_transaction                            # reads do not open a transaction
    con.execute("CREATE TABLE t (a int)")
    assert not con.in_transaction                            # DDL commits itself (MySQL)
    con.execute("INSERT INTO t (a) VALUES (1)")
    assert con.in_transaction
    con.commit()
    assert not con.in_transaction


def test_autocommit_connection(db_path):
    con = tesseradb.connect(db_path, autocommit=True)
    con.execute("CREATE TABLE t (a int)")
    con.execute("INSERT INTO t (a) VALUES (1)")
    assert not con.in_transaction
    con.close()
    other = tesseradb.connect(db_path)
    assert other.execute("SELECT a FROM t").fetchall() == [(1,)]
    other.close()


def test_errors_carry_errno_and_sqlstate(cur):
    with pytest.raises(tesseradb.ProgrammingError) as info:
        cur.execute("SELECT * FROM nope")
    exc = info.value
    assert (exc.errno, exc.sqlstate) == (1146, "42S02")
    assert exc.msg == "table 'nope' does not exist"
    assert str(exc) == "ERROR 1146 (42S02): table 'nope' does not exist"


@pytest.mark.parametrize("sql, seq, message", [
    ("INSERT INTO t (a, n) VALUES (?, ?)", [("x", 1), ("y",)], "the statement uses 2, and there are 1 supplied"),
    ("INSERT INTO t (a, n) VALUES (?, ?)", [("x", 1), {"a": 1}], "the statement uses 2"),
    ("INSERT INTO t (a, n) VALUES (:a, :n)", [{"a": "x", "n": 1}, {"a": "y"}],
     "You did not supply a value for binding parameter :n"),
    ("INSERT INTO t (a, n) VALUES (:a, :n)", [{"a": "x", "n": 1}, ("y", 2)], "named parameters need a mapping"),
])
def test_executemany_checks_every_parameter_set(con, sql, seq, message):
    con.execute("CREATE TABLE t (a text, n int)")
    with pytest.raises(tesseradb.ProgrammingError) as info:
        con.executemany(sql, seq)
    assert message in info.value.msg
    assert con.execute("SELECT COUNT(*) FROM t").fetchone() == (0,)


def test_executemany_binds_each_row_of_a_multi_row_insert(con):
    con.execute("CREATE TABLE t (a text, n int)")
    con.executemany("INSERT INTO t (a, n) VALUES (?, ?), (?, 0)", [("x", 1, "x0"), ("y", 2, "y0")])
    assert con.execute("SELECT a, n FROM t ORDER BY id").fetchall() == [("x", 1), ("x0", 0), ("y", 2), ("y0", 0)]
