"""Errors: each failure raises the right PEP 249 class with its MySQL errno and SQLSTATE, and changes
nothing. The table below is the contract that docs/errors.md describes."""
from __future__ import annotations

import pytest

import tesseradb
from tesseradb import errors

SETUP = [
    "CREATE TABLE t (name string, n int, flag bool, doc json, at timestamp, "
    "v float_vector_array knn_type='hnsw' knn_dims='2' hnsw_similarity='l2', plain float_vector)",
    "INSERT INTO t (id, name, n, v) VALUES (1, 'one', 1, [[0,0]]), (2, 'two', 2, [[1,1]])",
    "CREATE TABLE other (x int)",
]

# statement, PEP 249 class, engine class, errno, sqlstate, message (a substring)
CASES = [
    # 1064: syntax, and everything the grammar refuses
    ("FOO BAR", tesseradb.ProgrammingError, errors.SqlSyntaxError, 1064, "42000", "syntax error, unexpected 'FOO'"),
    ("SELECT FROM WHERE", tesseradb.ProgrammingError, errors.SqlSyntaxError, 1064, "42000", ""),
    ("SET NAMES latin1", tesseradb.NotSupportedError, errors.NotSupportedError, 1235, "42000", "UTF-8 only"),
    ("SHOW PROCESSLIST", tesseradb.ProgrammingError, errors.SqlSyntaxError, 1064, "42000", "syntax error"),
    ("SET nosuch = 1", tesseradb.ProgrammingError, errors.UnknownVariable, 1193, "HY000", "Unknown system variable"),
    ("USE other", tesseradb.ProgrammingError, errors.UnknownDatabase, 1049, "42000", "Unknown database 'other'"),
    ("INSERT INTO t (name)", tesseradb.ProgrammingError, errors.SqlSyntaxError, 1064, "42000", "incomplete statement"),
    ("CREATE TABLE x (a nosuchtype)", tesseradb.ProgrammingError, errors.SqlSyntaxError, 1064, "42000",
     "unknown column type 'nosuchtype'"),
    ("CREATE TABLE x (v float_vector knn_type='hnsw')", tesseradb.ProgrammingError, errors.SqlSyntaxError, 1064,
     "42000", "knn_dims and hnsw_similarity are required if knn_type='hnsw'"),
    ("SELECT id FROM t WHERE knn(v, 0, (0,0))", tesseradb.ProgrammingError, errors.SqlSyntaxError, 1064, "42000",
     "k parameter must be positive"),
    ("SELECT id FROM t WHERE knn(plain, 1, (0,0))", tesseradb.ProgrammingError, errors.SqlSyntaxError, 1064,
     "42000", "KNN index not enabled for attribute 'plain'"),
    ("SELECT knn_dist() FROM t", tesseradb.ProgrammingError, errors.SqlSyntaxError, 1064, "42000",
     "knn_dist() is only allowed for KNN() queries"),
    ("CREATE TABLE m (t text, v float_vector knn_type='hnsw' model_name='no/such-model' from='t')",
     tesseradb.ProgrammingError, errors.ModelError, 1064, "42000", "unknown model 'no/such-model'"),
    # 1146 / 1050 / 1054 / 1060
    ("SELECT * FROM nope", tesseradb.ProgrammingError, errors.NoSuchTable, 1146, "42S02", "table 'nope' does not exist"),
    ("INSERT INTO nope (a) VALUES (1)", tesseradb.ProgrammingError, errors.NoSuchTable, 1146, "42S02",
     "table 'nope' does not exist"),
    ("UPDATE nope SET a = 1", tesseradb.ProgrammingError, errors.NoSuchTable, 1146, "42S02", "table 'nope'"),
    ("DELETE FROM nope", tesseradb.ProgrammingError, errors.NoSuchTable, 1146, "42S02", "table 'nope'"),
    ("DROP TABLE nope", tesseradb.ProgrammingError, errors.NoSuchTable, 1146, "42S02", "table 'nope'"),
    ("SELECT * FROM t JOIN nope ON 1", tesseradb.ProgrammingError, errors.NoSuchTable, 1146, "42S02", "table 'nope'"),
    ("CREATE TABLE other (y int)", tesseradb.ProgrammingError, errors.TableExists, 1050, "42S01",
     "table 'other' already exists"),
    ("SELECT nope FROM t", tesseradb.ProgrammingError, errors.NoSuchColumn, 1054, "42S22",
     "Unknown column 'nope' in 'field list'"),
    ("INSERT INTO t (nope) VALUES (1)", tesseradb.ProgrammingError, errors.NoSuchColumn, 1054, "42S22",
     "Unknown column 'nope' in 'field list'"),
    ("UPDATE t SET nope = 1", tesseradb.ProgrammingError, errors.NoSuchColumn, 1054, "42S22", "Unknown column 'nope'"),
    ("ALTER TABLE t DROP COLUMN nope", tesseradb.ProgrammingError, errors.NoSuchColumn, 1054, "42S22",
     "Unknown column 'nope' in 'table t'"),
    ("SELECT id FROM t WHERE knn(nope, 1, (0,0))", tesseradb.ProgrammingError, errors.NoSuchColumn, 1054, "42S22",
     "requested KNN search attribute 'nope' not found"),
    ("ALTER TABLE t ADD COLUMN name text", tesseradb.ProgrammingError, errors.DuplicateColumn, 1060, "42S21",
     "Duplicate column name 'name'"),
    ("CREATE TABLE x (a int, a int)", tesseradb.ProgrammingError, errors.DuplicateColumn, 1060, "42S21",
     "Duplicate column name 'a'"),
    # other programming errors
    ("INSERT INTO t (name, n) VALUES ('x')", tesseradb.ProgrammingError, tesseradb.ProgrammingError, 1064, "42000",
     "Column count doesn't match value count at row 1"),
    # 1062: duplicate id
    ("INSERT INTO t (id, name) VALUES (1, 'again')", tesseradb.IntegrityError, errors.DuplicateKey, 1062, "23000",
     "duplicate id '1'"),
    ("INSERT INTO t (id, name) VALUES (5, 'a'), (6, 'b'), (5, 'c')", tesseradb.IntegrityError, errors.DuplicateKey,
     1062, "23000", "duplicate id '5'"),
    ("INSERT INTO t (id, name) SELECT id, name FROM t", tesseradb.IntegrityError, errors.DuplicateKey, 1062, "23000",
     "duplicate id '1'"),
    # 1366: values that do not fit the column
    ("INSERT INTO t (n) VALUES ('abc')", tesseradb.DataError, tesseradb.DataError, 1366, "HY000",
     "Incorrect integer value for column 'n'"),
    ("UPDATE t SET flag = 7", tesseradb.DataError, tesseradb.DataError, 1366, "HY000",
     "Incorrect boolean value for column 'flag'"),
    ("INSERT INTO t (doc) VALUES ('{oops')", tesseradb.DataError, tesseradb.DataError, 1366, "HY000",
     "Invalid JSON text for column 'doc'"),
    ("INSERT INTO t (at) VALUES ('soon')", tesseradb.DataError, tesseradb.DataError, 1366, "HY000",
     "Incorrect timestamp value for column 'at'"),
    ("INSERT INTO t (id, name) VALUES ('x', 'y')", tesseradb.DataError, tesseradb.DataError, 1366, "HY000",
     "Incorrect integer value: 'x' for column 'id' at row 1"),
    ("INSERT INTO t (v) VALUES ([[1,2,3]])", tesseradb.DataError, tesseradb.DataError, 1366, "HY000",
     "row 1, column 'v': vectors have 3 values, index 'v' needs 2 values"),
    ("INSERT INTO t (v) VALUES ((1,2))", tesseradb.DataError, tesseradb.DataError, 1366, "HY000",
     "row 1, column 'v': float_vector_array requires an array of vectors"),
    ("SELECT ABS(-9223372036854775808)", tesseradb.DataError, tesseradb.DataError, 1366, "HY000", "Out of range value"),
    # 1235: not supported
    ("INSERT IGNORE INTO t (name) SELECT 'x'", tesseradb.NotSupportedError, tesseradb.NotSupportedError, 1235, "42000",
     "INSERT ... SELECT is not supported with them"),
]


def snapshot(con):
    state = {"tables": con.execute("SHOW TABLES").fetchall()}
    for (name,) in state["tables"]:
        state[name] = (con.execute(f"SHOW CREATE TABLE `{name}`").fetchall(),
                       con.execute(f"SELECT * FROM `{name}` ORDER BY id").fetchall())
    state["knn"] = con.execute("SELECT id, knn_dist() FROM t WHERE knn(v, 10, (0,0))").fetchall()
    return state


@pytest.fixture(scope="module")
def committed(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("errors") / "errors.db")
    con = tesseradb.connect(path)
    for sql in SETUP:
        con.execute(sql)
    con.commit()
    con.close()
    return path


@pytest.mark.parametrize("sql, pep, cls, errno, sqlstate, message", CASES, ids=[c[0][:50] for c in CASES])
@pytest.mark.parametrize("in_transaction", [False, True], ids=["autocommit-off", "open-transaction"])
def test_error_class_errno_sqlstate_and_nothing_changes(committed, sql, pep, cls, errno, sqlstate, message,
                                                        in_transaction):
    con = tesseradb.connect(committed)
    try:
        if in_transaction:
            con.execute("INSERT INTO other (x) VALUES (42)")
        before = snapshot(con)
        with pytest.raises(pep) as info:
            con.execute(sql)
        exc = info.value
        assert isinstance(exc, cls) and isinstance(exc, tesseradb.DatabaseError)
        assert (exc.errno, exc.sqlstate) == (errno, sqlstate)
        assert message in exc.msg
        assert str(exc) == f"ERROR {errno} ({sqlstate}): {exc.msg}"
        # MySQL's implicit commit: DDL that parses ends the open transaction before it runs, even when
        # it then fails (an unknown type is a syntax error: nothing runs)
        ddl = sql.split()[0].upper() in ("CREATE", "DROP", "ALTER", "TRUNCATE") and "nosuchtype" not in sql
        assert con.in_transaction == (in_transaction and not ddl)
        assert snapshot(con) == before
        con.commit()
        assert con.execute("SELECT COUNT(*) FROM other").fetchone() == ((1,) if in_transaction else (0,))
        con.execute("DELETE FROM other")
        con.commit()
    finally:
        con.close()


def test_interface_errors():
    con = tesseradb.connect()
    cur = con.cursor()
    cur.close()
    with pytest.raises(tesseradb.InterfaceError) as info:
        cur.execute("SELECT 1")
    assert (info.value.errno, info.value.sqlstate) == (2000, "HY000")
    con.close()
    with pytest.raises(tesseradb.InterfaceError, match="closed database"):
        con.execute("SELECT 1")


def test_interrupted_by_the_statement_timeout():
    con = tesseradb.connect(statement_timeout=0.2)
    with pytest.raises(tesseradb.OperationalError) as info:
        con.execute("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT COUNT(*) FROM r")
    assert isinstance(info.value, errors.Interrupted)
    assert (info.value.errno, info.value.sqlstate) == (1317, "70100")
    assert info.value.msg == "Query execution was interrupted"
    assert con.execute("SELECT 1").fetchone() == (1,)          # the connection is still usable
    con.close()


def test_lock_wait_timeout(db_path):
    a, b = tesseradb.connect(db_path), tesseradb.connect(db_path, timeout=0.1)
    a.execute("CREATE TABLE t (x int)")
    a.execute("INSERT INTO t (x) VALUES (1)")        # DDL commits itself: a write keeps the lock
    with pytest.raises(tesseradb.OperationalError) as info:
        b.execute("CREATE TABLE u (x int)")
    assert isinstance(info.value, errors.Busy)
    assert info.value.errno == 1205
    a.close()
    b.close()


@pytest.mark.parametrize("path", ["/nonexistent-folder/x.db", "."])
def test_a_database_that_cannot_be_opened(path):
    with pytest.raises(tesseradb.OperationalError) as info:
        tesseradb.connect(path)
    assert info.value.errno == 1105
    assert "unable to open database file" in info.value.msg


def test_a_file_that_is_not_a_database(tmp_path):
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not an SQLite file " * 100)
    with pytest.raises(tesseradb.OperationalError, match="file is not a database"):
        con = tesseradb.connect(str(path))
        con.execute("SELECT 1")
    assert path.read_bytes() == b"this is not an SQLite file " * 100


def test_binding_errors():
    con = tesseradb.connect()
    with pytest.raises(tesseradb.ProgrammingError, match="Error binding parameter") as info:
        con.execute("SELECT ?", [{1, 2}])
    assert info.value.errno == 1064
    with pytest.raises(tesseradb.DataError, match="Out of range value"):
        con.execute("SELECT ?", [2 ** 70])
    with pytest.raises(tesseradb.DataError, match="not valid UTF-8"):
        con.execute("SELECT ?", ["\ud800"])
    con.close()


def test_errors_keep_the_internal_exception_as_their_cause():
    con = tesseradb.connect()
    with pytest.raises(tesseradb.ProgrammingError) as info:
        con.execute("SELECT * FROM nope")
    assert info.value.__cause__ is not None and not isinstance(info.value.__cause__, tesseradb.Error)
    con.close()


def test_every_engine_error_class_has_its_numbers():
    expected = {
        errors.Error: (1105, "HY000"), errors.InterfaceError: (2000, "HY000"), errors.DataError: (1366, "HY000"),
        errors.OperationalError: (1105, "HY000"), errors.IntegrityError: (1062, "23000"),
        errors.InternalError: (1815, "HY000"), errors.ProgrammingError: (1064, "42000"),
        errors.NotSupportedError: (1235, "42000"), errors.SqlSyntaxError: (1064, "42000"),
        errors.NoSuchTable: (1146, "42S02"), errors.TableExists: (1050, "42S01"),
        errors.NoSuchColumn: (1054, "42S22"), errors.DuplicateColumn: (1060, "42S21"),
        errors.DuplicateKey: (1062, "23000"), errors.ConstraintError: (1048, "23000"),
        errors.ModelError: (1064, "42000"), errors.Interrupted: (1317, "70100"), errors.Busy: (1205, "HY000"),
    }
    for cls, numbers in expected.items():
        assert (cls.errno, cls.sqlstate) == numbers, cls.__name__
        exc = cls("message")
        assert (exc.errno, exc.sqlstate, exc.msg) == (*numbers, "message")
    assert errors.Error("m", errno=1, sqlstate="X").errno == 1
