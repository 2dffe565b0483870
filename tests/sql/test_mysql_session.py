"""MySQL session and introspection statements through the DB-API: SET, USE, SHOW DATABASES / VARIABLES /
STATUS / ERRORS / [FULL] COLUMNS / TABLE STATUS, the session functions and information_schema."""
from __future__ import annotations

import pytest

import tesseradb


@pytest.fixture
def cur():
    con = tesseradb.connect(":memory:", autocommit=True)
    c = con.cursor()
    c.execute("CREATE TABLE t (name string, n int, body text)")
    c.execute("CREATE UNIQUE INDEX name_ux ON t (name)")
    c.execute("CREATE INDEX n_ix ON t (n)")
    c.execute("INSERT INTO t (name, n, body) VALUES ('a', 1, 'x'), ('b', 2, 'y')")
    yield c
    con.close()


def rows(cur, sql, params=None):
    return cur.execute(sql, params).fetchall()


def test_session_functions(cur):
    assert rows(cur, "SELECT LAST_INSERT_ID(), ROW_COUNT()") == [(2, 2)]
    rows(cur, "SELECT * FROM t")
    assert rows(cur, "SELECT FOUND_ROWS(), ROW_COUNT()") == [(2, -1)]
    database, version, at_version, conn_id = rows(cur, "SELECT DATABASE(), VERSION(), @@version, CONNECTION_ID()")[0]
    assert database == "main" and version == at_version and version.startswith("8.0") and conn_id >= 1
    cur.execute("UPDATE t SET n = 5 WHERE name = 'b'")
    assert rows(cur, "SELECT ROW_COUNT()") == [(1,)]
    other = tesseradb.connect(":memory:")
    assert other.execute("SELECT CONNECTION_ID()").fetchone()[0] != conn_id


def test_user_variables(cur):
    assert rows(cur, "SELECT @unset") == [(None,)]
    cur.execute("SET @top = (SELECT MAX(n) FROM t), @label := 'it''s', @list = 'a,b'")
    assert rows(cur, "SELECT @top + 1, @label, @list") == [(3, "it's", "a,b")]
    cur.execute("SET @pick = ?", ("a",))
    assert rows(cur, "SELECT n FROM t WHERE name = @pick") == [(1,)]
    cur.execute("UPDATE t SET n = @top * 10 WHERE name = @pick")
    assert rows(cur, "SELECT n FROM t WHERE name = 'a'") == [(20,)]


def test_set_names_charset_and_system_variables(cur):
    cur.execute("SET NAMES utf8mb4")
    cur.execute("SET NAMES 'utf8mb4' COLLATE 'utf8mb4_unicode_ci'")
    assert rows(cur, "SELECT @@collation_connection") == [("utf8mb4_unicode_ci",)]
    cur.execute("SET CHARACTER SET utf8")
    assert rows(cur, "SELECT @@character_set_client") == [("utf8mb3",)]
    with pytest.raises(tesseradb.NotSupportedError, match="UTF-8 only"):
        cur.execute("SET NAMES latin1")
    cur.execute("SET SESSION sql_mode = 'pipes_as_concat,ANSI_QUOTES'")
    assert "PIPES_AS_CONCAT is stored and reported" in rows(cur, "SHOW WARNINGS")[0][2]
    assert rows(cur, "SELECT @@sql_mode, @@session.sql_mode") == [("PIPES_AS_CONCAT,ANSI_QUOTES",) * 2]
    cur.execute("SET sql_mode = DEFAULT")
    assert rows(cur, "SELECT @@sql_mode")[0][0].startswith("ONLY_FULL_GROUP_BY")
    cases = [("SET nosuch = 1", 1193, "Unknown system variable 'nosuch'"),
             ("SET version = 'x'", 1238, "Variable 'version' is a read only variable"),
             ("SET autocommit = 'maybe'", 1231, "can't be set to the value of 'maybe'"),
             ("SELECT @@nosuch", 1193, "Unknown system variable 'nosuch'")]
    for sql, errno, text in cases:
        with pytest.raises(tesseradb.Error) as info:
            cur.execute(sql)
        assert info.value.errno == errno and text in info.value.msg


def test_set_autocommit_drives_transactions():
    con = tesseradb.connect(":memory:", autocommit=True)
    con.execute("CREATE TABLE k (a int)")
    con.execute("SET autocommit = 0")
    assert con.autocommit is False
    con.execute("INSERT INTO k (a) VALUES (1)")
    assert con.in_transaction
    con.execute("ROLLBACK")
    assert con.execute("SELECT COUNT(*) FROM k").fetchone() == (0,)
    con.execute("INSERT INTO k (a) VALUES (2)")
    con.execute("SET autocommit = 1")                 # commits, as in MySQL
    assert not con.in_transaction and con.autocommit is True
    con.autocommit = False
    assert con.execute("SELECT @@autocommit").fetchone() == (0,)


def test_use_and_show_databases(cur):
    assert rows(cur, "SHOW DATABASES") == [("information_schema",), ("main",)]
    assert rows(cur, "SHOW DATABASES LIKE 'ma%'") == [("main",)]
    cur.execute("USE main")
    with pytest.raises(tesseradb.Error) as info:
        cur.execute("USE other")
    assert (info.value.errno, info.value.msg) == (1049, "Unknown database 'other'")


def test_show_variables_and_status(cur):
    got = dict(rows(cur, "SHOW VARIABLES LIKE 'character\\_set\\_c%'"))
    assert got == {"character_set_client": "utf8mb4", "character_set_connection": "utf8mb4"}
    assert dict(rows(cur, "SHOW SESSION VARIABLES LIKE 'autocommit'")) == {"autocommit": "ON"}
    status = dict(rows(cur, "SHOW STATUS"))
    assert status["Threads_connected"] == "1" and status["Open_tables"] == "1"
    assert [d[0] for d in cur.execute("SHOW GLOBAL STATUS LIKE 'Uptime'").description] == ["Variable_name", "Value"]


def test_show_errors_keeps_the_diagnostics(cur):
    with pytest.raises(tesseradb.Error):
        cur.execute("SELECT * FROM missing")
    assert rows(cur, "SHOW ERRORS") == [("Error", 1146, "table 'missing' does not exist")]
    assert rows(cur, "SHOW WARNINGS") == [("Error", 1146, "table 'missing' does not exist")]
    rows(cur, "SELECT 1")
    assert rows(cur, "SHOW ERRORS") == []


def test_show_columns(cur):
    assert [d[0] for d in cur.execute("SHOW COLUMNS FROM t").description] == [
        "Field", "Type", "Null", "Key", "Default", "Extra"]
    assert rows(cur, "SHOW COLUMNS FROM t") == [
        ("id", "bigint", "NO", "PRI", None, "auto_increment"), ("name", "string", "YES", "UNI", None, ""),
        ("n", "int", "YES", "MUL", None, ""), ("body", "text", "YES", "", None, "")]
    full = rows(cur, "SHOW FULL COLUMNS IN t FROM main LIKE 'n%'")
    assert [(r[0], r[2], r[7]) for r in full] == [("name", "utf8mb4_0900_ai_ci", "select,insert,update,references"),
                                                 ("n", None, "select,insert,update,references")]
    with pytest.raises(tesseradb.Error, match="Unknown database 'x'"):
        cur.execute("SHOW COLUMNS FROM t FROM x")
    with pytest.raises(tesseradb.Error, match="table 'nope' does not exist"):
        cur.execute("SHOW FIELDS FROM nope")


def test_show_table_status(cur):
    cur.execute("CREATE TABLE e (a int)")
    got = cur.execute("SHOW TABLE STATUS").fetchall()
    names = [d[0] for d in cur.description]
    status = [dict(zip(names, r)) for r in got]
    assert [(s["Name"], s["Rows"], s["Auto_increment"]) for s in status] == [("e", 0, 1), ("t", 2, 3)]
    assert rows(cur, "SHOW TABLE STATUS LIKE 't'")[0][0] == "t"


def test_information_schema(cur):
    assert rows(cur, "SELECT TABLE_NAME, TABLE_TYPE, TABLE_ROWS FROM information_schema.TABLES "
                     "WHERE TABLE_SCHEMA = DATABASE()") == [("t", "BASE TABLE", 2)]
    assert rows(cur, "SELECT column_name, data_type, is_nullable, column_key FROM information_schema.columns "
                     "WHERE table_name = 't' ORDER BY ordinal_position") == [
        ("id", "bigint", "NO", "PRI"), ("name", "string", "YES", "UNI"), ("n", "int", "YES", "MUL"),
        ("body", "text", "YES", "")]
    assert rows(cur, "SELECT INDEX_NAME, COLUMN_NAME, NON_UNIQUE FROM INFORMATION_SCHEMA.STATISTICS "
                     "ORDER BY INDEX_NAME") == [("PRIMARY", "id", 0), ("n_ix", "n", 1), ("name_ux", "name", 0)]
    cur.execute("CREATE TABLE later (x int)")                  # refilled for every query
    assert rows(cur, "SELECT COUNT(*) FROM information_schema.tables") == [(2,)]
    assert rows(cur, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY 1") == [
        ("information_schema",), ("main",)]
    assert rows(cur, "SHOW TABLES") == [("later",), ("t",)]      # nothing of it shows as a table


def test_a_file_database_is_named_after_the_file(tmp_path):
    con = tesseradb.connect(str(tmp_path / "shop.db"), autocommit=True)
    con.execute("CREATE TABLE items (a int)")
    assert con.execute("SELECT DATABASE()").fetchone() == ("shop",)
    assert con.execute("SHOW DATABASES").fetchall() == [("information_schema",), ("shop",)]
    con.execute("USE shop")
    con.execute("USE main")                                     # SQLite's name for it works too
    assert [d[0] for d in con.execute("SHOW FULL TABLES FROM shop").description] == ["Tables_in_shop", "Table_type"]
    assert con.execute("SELECT TABLE_SCHEMA FROM information_schema.TABLES").fetchall() == [("shop",)]


def test_executemany_follows_the_same_insert_rules():
    con = tesseradb.connect(":memory:", autocommit=True)
    cur = con.cursor()
    cur.execute("CREATE TABLE u (user_id int PRIMARY KEY, name varchar(20) NOT NULL UNIQUE)")
    cur.executemany("INSERT INTO u (user_id, name) VALUES (?, ?)", [(1, "a"), (2, "b")])
    assert cur.execute("SELECT * FROM u ORDER BY user_id").fetchall() == [(1, "a"), (2, "b")]
    cases = [("INSERT INTO u VALUES (?, ?)", [(1, "q")], "Duplicate entry '1' for key 'PRIMARY'"),
             ("INSERT INTO u (name) VALUES (?)", [("z",)], "Field 'user_id' doesn't have a default value"),
             ("INSERT INTO u VALUES (?, ?)", [(9, "a")], "Duplicate entry 'a' for key 'name'")]
    for sql, seq, message in cases:
        with pytest.raises(tesseradb.IntegrityError, match=message):
            cur.executemany(sql, seq)
    cur.executemany("INSERT IGNORE INTO u VALUES (?, ?)", [(1, "q"), (5, "e")])
    assert cur.rowcount == 1
    assert cur.execute("SELECT user_id FROM u ORDER BY 1").fetchall() == [(1,), (2,), (5,)]


def test_in_process_text_stays_utf8_and_only_the_server_sets_other_character_sets():
    """The DB-API and the shell take and return ``str``: SET NAMES latin1 is refused with its error
    and changes nothing. ``tessera serve`` converts at the wire and hands its session's sets to the
    engine connection (``Connection.serve_charsets``), so that @@x in its statements agrees."""
    con = tesseradb.connect(":memory:", autocommit=True)
    read = "SELECT @@character_set_client, @@character_set_results, @@collation_connection"
    before = con.execute(read).fetchall()
    assert before == [("utf8mb4", "utf8mb4", "utf8mb4_0900_ai_ci")]
    for sql in ("SET NAMES latin1", "SET character_set_results = 'latin1'", "SET CHARACTER SET cp1251",
                "SET collation_connection = 'latin1_bin'"):
        with pytest.raises(tesseradb.NotSupportedError) as info:
            con.execute(sql)
        assert info.value.errno == 1235 and "UTF-8" in info.value.msg
        assert con.execute(read).fetchall() == before
    with pytest.raises(tesseradb.NotSupportedError, match="UTF-8 only"):
        con.execute("SET @x = 1, NAMES latin1")
    served = tesseradb.connect(":memory:", autocommit=True)
    served.serve_charsets({"character_set_client": "latin1", "character_set_connection": "latin1",
                           "character_set_results": None, "collation_connection": "latin1_swedish_ci"})
    assert served.execute(read).fetchall() == [("latin1", None, "latin1_swedish_ci")]
    with pytest.raises(tesseradb.NotSupportedError, match="SET statement of their own"):
        served.execute("SET NAMES utf8mb4")       # only the server's own SET changes them
    for bad in ({"character_set_client": None}, {"character_set_client": "latin1; DROP"}, {"version": "x"}):
        with pytest.raises(tesseradb.ProgrammingError):
            served.serve_charsets(bad)
    assert served.execute(read).fetchall() == [("latin1", None, "latin1_swedish_ci")]
    assert con.execute(read).fetchall() == before
    served.close()
    con.close()


@pytest.mark.parametrize("bad", ["NAMES latin1", "sql_mode = 'NO_SUCH_MODE'", "no_such_variable = 1",
                                 "version = 'x'", "autocommit = 'maybe'"])
def test_a_set_that_fails_on_one_item_changes_no_variable(cur, bad):
    """As in MySQL, a SET whose assignments include one that fails takes effect for none of them:
    the user variables, the system variables and sql_mode's quoting before it stay as they were."""
    read = "SELECT @x, @y, @@sql_mode, @@max_execution_time"
    cur.execute("SET @x = 'kept', sql_mode = 'ANSI_QUOTES', max_execution_time = 5")
    before = rows(cur, read)
    with pytest.raises(tesseradb.Error):
        cur.execute(f"SET @x = 'changed', @y = 2, sql_mode = '', max_execution_time = 7, {bad}")
    assert rows(cur, read) == before == [("kept", None, "ANSI_QUOTES", 5)]
    assert rows(cur, 'SELECT "name" FROM t ORDER BY 1') == [("a",), ("b",)]     # ANSI_QUOTES still read
    cur.execute("SET @x = 'changed', max_execution_time = 0")                   # a good SET still applies
    assert rows(cur, "SELECT @x, @@max_execution_time") == [("changed", 0)]
