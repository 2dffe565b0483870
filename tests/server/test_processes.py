"""Work is visible and ends with its client (issue 21): SHOW PROCESSLIST, KILL, a statement whose
client disconnects, max_execution_time, and values of 16 MiB or more over the wire."""
from __future__ import annotations

import socket

import mysql.connector
import pymysql
import pytest

import tesseradb
from tesseradb.sql import executor
from tests.server.support import FOREVER, connect, mariadb, processlist, run_forever, wait_for



@pytest.fixture
def unlimited(db_file):
    srv = tesseradb.serve(db_file, port=0, max_execution_time=0, background=True)
    yield srv
    srv.stop()



def test_processlist_shows_small_sequential_ids_user_state_and_text(unlimited):
    first = connect(unlimited.port, user="alice")
    second = connect(unlimited.port, user="bob")
    try:
        assert (first.thread_id(), second.thread_id()) == (1, 2)
        with first.cursor() as cur:
            cur.execute("SELECT CONNECTION_ID()")
            assert cur.fetchone()[0] == 1
        with second.cursor() as cur:
            cur.execute("SHOW PROCESSLIST")
            rows = {r[0]: r for r in cur.fetchall()}
            assert [d[0] for d in cur.description] == ["Id", "User", "Host", "db", "Command", "Time",
                                                       "State", "Info"]
        assert rows[1][1] == "alice" and rows[1][4] == "Sleep" and rows[1][7] is None
        assert rows[2][1] == "bob" and rows[2][4] == "Query" and rows[2][7] == "SHOW PROCESSLIST"
        assert rows[1][2].startswith("127.0.0.1:")
    finally:
        first.close()
        second.close()


def test_kill_query_stops_a_runaway_statement_and_the_connection_lives(unlimited):
    victim = connect(unlimited.port, user="victim")
    worker, outcome = run_forever(victim)
    wait_for(lambda: any(r[7] == FOREVER for r in processlist(unlimited.port)))
    with connect(unlimited.port) as c, c.cursor() as cur:
        cur.execute(f"KILL QUERY {victim.thread_id()}")
        worker.join(30)
        assert not worker.is_alive() and outcome == {"errno": 1317}
        with pytest.raises(pymysql.err.MySQLError) as info:
            cur.execute("KILL 4242")
        assert info.value.args[0] == 1094
    with victim.cursor() as cur:
        cur.execute("SELECT 1")
        assert cur.fetchone() == (1,)
    victim.close()


def test_kill_connection_from_the_mariadb_cli(unlimited):
    victim = connect(unlimited.port, user="victim")
    try:
        out = mariadb(unlimited.port, "-B", "-N", sql=f"KILL {victim.thread_id()};")
        assert out.returncode == 0, out.stderr
        wait_for(lambda: all(r[1] != "victim" for r in processlist(unlimited.port)))
    finally:
        victim.close()


def test_a_statement_stops_when_its_client_disconnects(unlimited):
    gone = connect(unlimited.port, user="leaver")
    gone._execute_command(3, FOREVER)                 # COM_QUERY, never read the answer
    wait_for(lambda: any(r[7] == FOREVER for r in processlist(unlimited.port)))
    gone._sock.shutdown(socket.SHUT_RDWR)
    gone._sock.close()
    wait_for(lambda: all(r[1] != "leaver" for r in processlist(unlimited.port)), timeout=30)


def test_a_statement_stops_when_its_client_quits_behind_it(unlimited):
    """The close is seen on the socket even behind a command the server has not read: the
    connection's own thread is busy running the statement, and the client sent COM_QUIT, then left."""
    gone = connect(unlimited.port, user="quitter")
    gone._execute_command(3, FOREVER)                 # COM_QUERY, never read the answer
    wait_for(lambda: any(r[7] == FOREVER for r in processlist(unlimited.port)))
    gone._execute_command(1, "")                      # COM_QUIT behind it
    gone._sock.shutdown(socket.SHUT_RDWR)
    gone._sock.close()
    wait_for(lambda: all(r[1] != "quitter" for r in processlist(unlimited.port)), timeout=30)


def test_max_execution_time_default_session_and_hint(db_file):
    srv = tesseradb.serve(db_file, port=0, max_execution_time=400, background=True)
    try:
        with connect(srv.port) as c, c.cursor() as cur:
            cur.execute("SELECT @@max_execution_time")
            assert cur.fetchone()[0] == 400
            with pytest.raises(pymysql.err.MySQLError) as info:
                cur.execute(FOREVER)
            assert info.value.args[0] == 3024
            cur.execute("SET max_execution_time = 0")
            with pytest.raises(pymysql.err.MySQLError) as info:
                cur.execute(FOREVER.replace("SELECT count", "SELECT /*+ MAX_EXECUTION_TIME(200) */ count"))
            assert info.value.args[0] == 3024
            cur.execute("SET max_execution_time = 300")
            cur.execute("CREATE TABLE t (n int)")       # writes keep no limit of their own
            cur.execute("INSERT INTO t (n) WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c "
                        "WHERE x < 200000) SELECT x FROM c")
            assert cur.rowcount == 200000
            with pytest.raises(pymysql.err.MySQLError) as info:
                cur.execute("SET max_execution_time = 'soon'")
            assert info.value.args[0] == 1232
    finally:
        srv.stop()


def test_max_execution_time_holds_for_a_select_run_before(db_file, monkeypatch):
    """A SELECT the server ran before (its plan cached: the engine's shorter path, which every client
    of the server takes since the server sets max_execution_time) still stops at the limit: a fast
    execute of a prepared statement makes the plan, a slow one with another parameter must stop."""
    cached, direct = [], executor._direct

    def counted(*args):
        result = direct(*args)
        cached.append(result is not None)
        return result
    monkeypatch.setattr(executor, "_direct", counted)       # the server runs in this process
    srv = tesseradb.serve(db_file, port=0, max_execution_time=300, background=True)
    try:
        with connect(srv.port) as c, c.cursor() as cur:
            cur.execute("CREATE TABLE p (a int, b int)")
            cur.executemany("INSERT INTO p (id, a, b) VALUES (%s, %s, 1)", [(i, i) for i in range(1, 401)])
        con = mysql.connector.connect(host="127.0.0.1", port=srv.port, user="app", database="docs")
        try:
            cur = con.cursor(prepared=True)
            sql = "SELECT x.id FROM p AS x, p AS y, p AS z WHERE x.b = ? AND x.a + y.a + z.a = -1"
            for _ in range(2):
                cur.execute(sql, (2,))
                assert cur.fetchall() == []
            assert cached[-1]                   # the second one took the cached path
            with pytest.raises(mysql.connector.Error) as info:
                cur.execute(sql, (1,))          # 64 million rows to look at
                cur.fetchall()
            assert info.value.errno == 3024
            cur.execute(sql, (2,))
            assert cur.fetchall() == []
        finally:
            con.close()
    finally:
        srv.stop()


# -- values of any size ---------------------------------------------------------------------------
BIG = [17_000_000, 0xFFFFFF - 5, 0xFFFFFF * 2 - 4]


@pytest.mark.parametrize("n", BIG)
def test_values_of_16_mib_and_more_come_back_text_protocol(server, n):
    with connect(server.port, max_allowed_packet=128 * 1024 * 1024) as c, c.cursor() as cur:
        cur.execute("SELECT REPEAT('a', %s) AS v, 7 AS k", (n,))
        value, k = cur.fetchone()
        assert len(value) == n and set(value) == {"a"} and k == 7


def test_a_20_mb_text_written_is_read_back_by_every_client(server):
    big = "é" * 10_000_000 + "end"              # 20 MB of UTF-8
    with connect(server.port, max_allowed_packet=128 * 1024 * 1024) as c, c.cursor() as cur:
        cur.execute("CREATE TABLE t (s text)")
        cur.execute("INSERT INTO t (s) VALUES (%s)", (big,))
        cur.execute("SELECT s FROM t")
        assert cur.fetchone()[0] == big
    con = mysql.connector.connect(host="127.0.0.1", port=server.port, user="app", database="docs")
    try:
        cur = con.cursor()
        cur.execute("SELECT s FROM t")
        assert cur.fetchone()[0] == big
    finally:
        con.close()
    out = mariadb(server.port, "-B", "-N", "--max-allowed-packet=128M", sql="SELECT s FROM t;")
    assert out.returncode == 0, out.stderr
    assert out.stdout.rstrip("\n") == big


def test_nul_and_bytes_round_trip(server):
    with connect(server.port) as c, c.cursor() as cur:
        for value in ["a\0b", "\0", "tail\0"]:
            cur.execute("SELECT %s AS v", (value,))
            assert cur.fetchone()[0] == value
        cur.execute("SELECT %s AS v", (b"\x00\xff\x01",))
        assert cur.fetchone()[0] == b"\x00\xff\x01"
    con = mysql.connector.connect(host="127.0.0.1", port=server.port, user="app", database="docs",
                                  autocommit=True)
    try:
        cur = con.cursor(prepared=True)
        cur.execute("CREATE TABLE b (v text, raw text)")
        cur.execute("INSERT INTO b (v, raw) VALUES (?, ?)", ("x\0y", "plain"))
        for value in [b"\x00\x01\xff\xfe", b"text bytes", "x\0y"]:
            cur.execute("SELECT ? AS v", (value,))
            got = cur.fetchone()[0]
            assert got == (value.decode() if value == b"text bytes" else value)
        cur.execute("SELECT v FROM b")
        assert cur.fetchone()[0] == "x\0y"
    finally:
        con.close()
