"""The wire server's boundary (issue 21): INTO OUTFILE inside a literal on a --read-only server,
what the driver escapes under each sql_mode is what the server reads, and secure_file_priv."""
from __future__ import annotations

import os

import mysql.connector
import pymysql
import pytest

import tesseradb
from tests.server.support import connect, mariadb

NO_BACKSLASH = 0x0200          # SERVER_STATUS_NO_BACKSLASH_ESCAPES
MODES = ["NO_BACKSLASH_ESCAPES", "ANSI_QUOTES", "", "ANSI_QUOTES,NO_BACKSLASH_ESCAPES", "TRADITIONAL"]
HOSTILE = ["\\'; DELETE FROM t; -- ", "\\", "\\\\", "a'b", 'a"b', "\\'", "x\\\\'y", "'; DELETE FROM t; #",
           '"; DELETE FROM t; -- ', "\\\"", "`t`"]


@pytest.fixture
def read_only_server(db_file):
    with tesseradb.connect(db_file, autocommit=True) as con:
        con.execute("CREATE TABLE t (n int)")
        con.execute("INSERT INTO t (n) VALUES (1)")
    srv = tesseradb.serve(db_file, port=0, read_only=True, background=True)
    yield srv
    srv.stop()


@pytest.mark.parametrize("sql", ["SELECT \"INTO OUTFILE '{p}'\" AS a", "SELECT 'INTO OUTFILE ''{p}''' AS a",
                                 "SELECT 'INTO OUTFILE \\'{p}\\'' AS a", "SELECT 1 AS a /* INTO OUTFILE '{p}' */",
                                 "SELECT 1 AS `INTO OUTFILE '{p}'`"])
def test_read_only_server_writes_no_file_from_a_literal(read_only_server, tmp_path, sql):
    target = tmp_path / "x.csv"
    text = sql.format(p=target)
    with connect(read_only_server.port) as c, c.cursor() as cur:
        cur.execute(text)
        assert len(cur.fetchall()) == 1
    con = mysql.connector.connect(host="127.0.0.1", port=read_only_server.port, user="app", database="docs")
    try:
        cur = con.cursor(prepared=True)
        cur.execute(text)
        assert len(cur.fetchall()) == 1
    finally:
        con.close()
    assert not target.exists()


def test_read_only_server_refuses_a_real_outfile(read_only_server, tmp_path):
    with connect(read_only_server.port) as c, c.cursor() as cur:
        with pytest.raises(pymysql.err.MySQLError) as info:
            cur.execute(f"SELECT n FROM t INTO OUTFILE '{tmp_path}/y.csv'")
        assert info.value.args[0] == 1290
    assert not (tmp_path / "y.csv").exists()


def _table(port: int) -> None:
    with connect(port) as c, c.cursor() as cur:
        cur.execute("CREATE TABLE t (s string)")
        cur.executemany("INSERT INTO t (s) VALUES (%s)", [(str(i),) for i in range(7)])


def _count(port: int) -> int:
    with connect(port) as c, c.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM t")
        return cur.fetchone()[0]


@pytest.mark.parametrize("mode", MODES)
def test_pymysql_escaping_under_each_sql_mode(server, mode):
    _table(server.port)
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("SET sql_mode = %s", (mode,))
        assert bool(c.server_status & NO_BACKSLASH) == ("NO_BACKSLASH_ESCAPES" in mode)
        for value in HOSTILE:
            cur.execute("SELECT %s AS v", (value,))
            assert cur.fetchone()[0] == value
            cur.execute("INSERT INTO t (s) VALUES (%s)", (value,))
        cur.execute("SELECT s FROM t WHERE s = %s", (HOSTILE[0],))
        assert cur.fetchall() == ((HOSTILE[0],),)
    assert _count(server.port) == 7 + len(HOSTILE)


@pytest.mark.parametrize("mode", MODES)
def test_mysql_connector_escaping_under_each_sql_mode(server, mode):
    _table(server.port)
    con = mysql.connector.connect(host="127.0.0.1", port=server.port, user="app", database="docs",
                                  autocommit=True)
    try:
        con.sql_mode = mode                   # connector sends SET sql_mode and escapes for it
        cur = con.cursor()
        cur.execute("SELECT @@sql_mode")
        assert ("NO_BACKSLASH_ESCAPES" in cur.fetchone()[0]) == ("NO_BACKSLASH_ESCAPES" in mode)
        for value in HOSTILE:
            cur.execute("SELECT %s AS v", (value,))
            assert cur.fetchone()[0] == value
            cur.execute("DELETE FROM t WHERE s = %s", (value,))   # matches nothing
    finally:
        con.close()
    assert _count(server.port) == 7


def test_set_sql_mode_checks_the_list_over_the_wire(server):
    with connect(server.port) as c, c.cursor() as cur:
        with pytest.raises(pymysql.err.MySQLError) as info:
            cur.execute("SET sql_mode = 'NO_BACKSLASH_ESCAPES,BOGUS'")
        assert info.value.args[0] == 1231
        cur.execute("SELECT @@sql_mode")
        assert "BOGUS" not in cur.fetchone()[0]
        assert not c.server_status & NO_BACKSLASH
        cur.execute("SET sql_mode = 'no_backslash_escapes'")
        cur.execute("SELECT @@sql_mode")
        assert cur.fetchone()[0] == "NO_BACKSLASH_ESCAPES"
        c.ping()
        cur.execute("SELECT %s", ("back\\slash",))
        assert cur.fetchone()[0] == "back\\slash"


# -- secure_file_priv ---------------------------------------------------------------------------------
def test_server_refuses_file_statements_by_default(server, tmp_path):
    (tmp_path / "a.csv").write_text("s\nx\n")
    _table(server.port)
    with connect(server.port) as c, c.cursor() as cur:
        for sql in [f"LOAD DATA INFILE '{tmp_path}/a.csv' INTO TABLE t", f"LOAD DATA INFILE '{tmp_path}/*.csv' INTO TABLE t",
                    f"SELECT s FROM t INTO OUTFILE '{tmp_path}/o.csv'", "LOAD DATA INFILE '/etc/nope/*.csv' INTO TABLE t",
                    f"BACKUP TO '{tmp_path}/b.db'", f"BACKUP TO '{tmp_path}/a.csv'", "BACKUP TO '/nowhere/b.db'"]:
            with pytest.raises(pymysql.err.MySQLError) as info:
                cur.execute(sql)
            assert info.value.args[0] == 1290, sql
            assert str(tmp_path) not in info.value.args[1]
        cur.execute("SHOW VARIABLES LIKE 'secure_file_priv'")
        assert cur.fetchall()[0][1] in (None, "", "NULL")
    assert not (tmp_path / "o.csv").exists() and not (tmp_path / "b.db").exists()
    assert (tmp_path / "a.csv").read_text() == "s\nx\n"
    assert _count(server.port) == 7


def test_server_confined_to_secure_file_priv(db_file, tmp_path):
    allowed = tmp_path / "files"
    allowed.mkdir()
    (allowed / "a.csv").write_text("s\nfrom-file\n")
    (tmp_path / "secret.csv").write_text("s\nsecret\n")
    os.symlink(tmp_path / "secret.csv", allowed / "evil.csv")
    srv = tesseradb.serve(db_file, port=0, secure_file_priv=str(allowed), background=True)
    try:
        _table(srv.port)
        with connect(srv.port) as c, c.cursor() as cur:
            cur.execute(f"LOAD DATA INFILE '{allowed}/a.csv' INTO TABLE t")
            cur.execute("SELECT s FROM t INTO OUTFILE 'out.csv'")
            for sql, errno in [("SELECT s FROM t INTO OUTFILE 'out.csv'", 1086),
                               (f"SELECT s FROM t INTO OUTFILE '{tmp_path}/secret.csv'", 1290),
                               ("LOAD DATA INFILE 'evil.csv' INTO TABLE t", 1290),
                               ("LOAD DATA INFILE '../*.csv' INTO TABLE t", 1290),
                               (f"BACKUP TO '{tmp_path}/secret.csv'", 1290),
                               (f"BACKUP TO '{tmp_path}/copy.db'", 1290),
                               ("BACKUP TO '../copy.db'", 1290),
                               ("BACKUP TO 'out.csv'", 1086)]:
                with pytest.raises(pymysql.err.MySQLError) as info:
                    cur.execute(sql)
                assert info.value.args[0] == errno, sql
                assert "secret" not in info.value.args[1]
            cur.execute("BACKUP TO 'copy.db'")
        assert "from-file" in (allowed / "out.csv").read_text()
        assert (allowed / "copy.db").exists() and not (tmp_path / "copy.db").exists()
        assert (tmp_path / "secret.csv").read_text() == "s\nsecret\n"
        out = mariadb(srv.port, "-B", "-N", sql="SELECT @@secure_file_priv;")
        assert out.stdout.strip() == str(allowed)
    finally:
        srv.stop()


# -- pathological statements over the wire -------------------------------------------------------------
def test_pathological_statements_are_refused_over_the_wire(server):
    with connect(server.port) as c, c.cursor() as cur:
        for sql in ["SELECT 1 WHERE " + " OR ".join(["1 = 1"] * 100_000),
                    "SELECT 1 WHERE 1 IN (" + ",".join(["1"] * 200_000) + ")"]:
            with pytest.raises(pymysql.err.MySQLError) as info:
                cur.execute(sql)
            assert info.value.args[0] == 1064 and "too complex" in info.value.args[1]
        cur.execute("SELECT 1")
        assert cur.fetchone() == (1,)


def test_engine_tables_and_server_paths_stay_hidden_over_the_wire(server, db_file):
    _table(server.port)
    with connect(server.port) as c, c.cursor() as cur:
        for sql in ["SELECT * FROM pragma_database_list", "SELECT name FROM sqlite_master",
                    "CREATE VIEW v AS SELECT * FROM _tessera_catalog", "SELECT * FROM dbstat",
                    "WITH x AS (SELECT * FROM _tessera_catalog) SELECT * FROM x"]:
            with pytest.raises(pymysql.err.MySQLError) as info:
                cur.execute(sql)
            assert info.value.args[0] == 1146, sql
            assert os.path.dirname(db_file) not in info.value.args[1]
        cur.execute("SHOW TABLES")
        assert [r[0] for r in cur.fetchall()] == ["t"]


def test_a_multi_statement_packet_is_read_after_its_own_set_sql_mode(server):
    from pymysql.constants import CLIENT
    with connect(server.port, client_flag=CLIENT.MULTI_STATEMENTS) as c, c.cursor() as cur:
        cur.execute("SET sql_mode = 'NO_BACKSLASH_ESCAPES'; SELECT 'a\\' AS s; SELECT 'b\\' AS t")
        assert list(cur.fetchall()) == []                  # the SET
        assert cur.nextset() and cur.fetchall() == (("a\\",),)
        assert cur.nextset() and cur.fetchall() == (("b\\",),)
    with connect(server.port, client_flag=CLIENT.MULTI_STATEMENTS) as c, c.cursor() as cur:
        cur.execute("SET sql_mode = ''; SELECT 'it\\'s' AS s")      # and back: a backslash escapes again
        assert cur.nextset() and cur.fetchall() == (("it's",),)
