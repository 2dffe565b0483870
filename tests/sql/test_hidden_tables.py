"""The engine's own tables and SQLite's schema tables stay hidden on every path (issue 21)."""
from __future__ import annotations

import pytest

import tesseradb

PATHS = [
    "SELECT * FROM _tessera_catalog",
    "SELECT * FROM main._tessera_catalog",
    "SELECT * FROM `_TESSERA_CATALOG`",
    "WITH x AS (SELECT * FROM _tessera_catalog) SELECT * FROM x",
    "SELECT * FROM (SELECT * FROM _tessera_catalog) AS q",
    "SELECT (SELECT COUNT(*) FROM _tessera_catalog) AS n",
    "SELECT * FROM t WHERE s IN (SELECT name FROM _tessera_catalog)",
    "SELECT * FROM t JOIN _tessera_catalog c ON c.name = t.s",
    "SELECT name FROM sqlite_master",
    "SELECT sql FROM sqlite_schema",
    "SELECT name FROM temp.sqlite_master",
    "SELECT * FROM pragma_database_list",
    "SELECT * FROM pragma_table_info('_tessera_catalog')",
    "SELECT * FROM pragma_table_list",
    "SELECT name FROM dbstat",
    "EXPLAIN SELECT * FROM sqlite_master",
    "CREATE VIEW v AS SELECT * FROM _tessera_catalog",
    "CREATE VIEW v AS SELECT name FROM sqlite_master",
    "INSERT INTO t (s) SELECT name FROM sqlite_master",
    "UPDATE t SET s = (SELECT name FROM _tessera_catalog LIMIT 1)",
    "DELETE FROM t WHERE s IN (SELECT definition FROM _tessera_catalog)",
]


@pytest.mark.parametrize("sql", PATHS)
def test_engine_tables_are_unknown_tables(tmp_path, sql):
    con = tesseradb.connect(str(tmp_path / "h.db"), autocommit=True)
    con.execute("CREATE TABLE t (s string)")
    con.execute("INSERT INTO t (s) VALUES ('t')")
    with pytest.raises(tesseradb.ProgrammingError) as info:
        con.execute(sql)
    assert info.value.errno == 1146
    assert str(tmp_path) not in info.value.msg
    assert con.execute("SELECT s FROM t").fetchall() == [("t",)]
    assert [r[0] for r in con.execute("SHOW TABLES").fetchall()] == ["t"]


def test_table_functions_of_user_data_still_work():
    con = tesseradb.connect()
    assert con.execute("SELECT value FROM json_each('[1, 2]')").fetchall() == [(1,), (2,)]


def test_a_repeated_statement_is_checked_once_and_still_refused(tmp_path, monkeypatch):
    """A statement the connection keeps parsed (a SELECT run again with new parameters) is checked for
    the engine's tables once, not on every execute; one that names them is refused every time."""
    from tesseradb.sql.mysql import hidden
    calls = []
    check = hidden.check
    monkeypatch.setattr(hidden, "check", lambda stmt: (calls.append(stmt), check(stmt))[1])
    con = tesseradb.connect(str(tmp_path / "h.db"), autocommit=True)
    con.execute("CREATE TABLE t (s string)")
    con.execute("INSERT INTO t (s) VALUES ('a'), ('b')")
    calls.clear()
    for value in ("a", "b", "a"):
        assert con.execute("SELECT s FROM t WHERE s = ?", (value,)).fetchall() == [(value,)]
    assert len(calls) == 1
    for _ in range(3):
        with pytest.raises(tesseradb.ProgrammingError) as info:
            con.execute("SELECT name FROM sqlite_master WHERE name = ?", ("t",))
        assert info.value.errno == 1146
    assert len(calls) == 4
