"""Protocol commands that change the session: COM_INIT_DB, COM_CHANGE_USER, COM_RESET_CONNECTION;
and the statement timeout."""
from __future__ import annotations

import mysql.connector
import pymysql
import pytest

import tesseradb
from tests.server.support import connect

LONG_QUERY = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT COUNT(*) FROM r"


def test_init_db(server):
    with connect(server.port, database=None) as c, c.cursor() as cur:
        c.select_db("docs")                          # COM_INIT_DB
        cur.execute("SELECT DATABASE()")
        assert cur.fetchall() == (("docs",),)
        with pytest.raises(pymysql.err.OperationalError) as info:
            c.select_db("other")
        assert info.value.args[0] == 1049


def test_reset_connection_ends_the_transaction(server):
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("CREATE TABLE t (n int)")
    con = mysql.connector.connect(host="127.0.0.1", port=server.port, user="app", database="docs")
    cur = con.cursor()
    cur.execute("INSERT INTO t (n) VALUES (1)")      # connector: autocommit off, so a transaction opens
    con.cmd_reset_connection()
    cur = con.cursor()
    cur.execute("SELECT COUNT(*) FROM t")
    assert cur.fetchall() == [(0,)]                  # the reset rolled the insert back
    con.close()
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM t")
        assert cur.fetchall() == ((0,),)


def test_change_user(server):
    con = mysql.connector.connect(host="127.0.0.1", port=server.port, user="app", database="docs")
    con.cmd_change_user(username="other", password="", database="docs")
    cur = con.cursor()
    cur.execute("SELECT USER(), DATABASE()")
    assert cur.fetchall() == [("other", "docs")]
    con.close()


def test_statement_timeout_interrupts(db_file):
    srv = tesseradb.serve(db_file, port=0, statement_timeout=0.5, background=True)
    try:
        with connect(srv.port) as c, c.cursor() as cur:
            with pytest.raises(pymysql.err.OperationalError) as info:
                cur.execute(LONG_QUERY)
            assert (info.value.args[0], info.value.sqlstate) == (1317, "70100")
            cur.execute("SELECT 1")
            assert cur.fetchall() == ((1,),)
    finally:
        srv.stop()
