"""PyMySQL against `tessera serve`: what a Python application relies on over the wire."""
from __future__ import annotations

import socket
import threading
import time

import pymysql
import pytest
from pymysql.constants import CLIENT, COMMAND

from tests.server.support import connect, load_docs


# -- auto-embedding and search -------------------------------------------------------------------------
def test_insert_embeds_and_knn_finds_by_meaning(server):
    load_docs(server.port)
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("SELECT id, title FROM docs WHERE knn(chunks, 1, %s)", ("how long are backups kept",))
        assert cur.fetchall() == ((3, "Backups"),)
        cur.execute("SELECT id, knn_dist() FROM docs WHERE knn(chunks, 3, 'pasta') AND tag = %s", ("ops",))
        rows = cur.fetchall()
        assert [r[0] for r in rows] != [] and {r[0] for r in rows} == {1, 3}
        assert all(isinstance(r[1], float) for r in rows) and rows[0][1] <= rows[1][1]


def test_vectors_are_text_in_manticore_form(server):
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("CREATE TABLE v (v float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2', "
                    "a float_vector_array knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')")
        cur.execute("INSERT INTO v (id, v, a) VALUES (1, (0.5, -1), [[1, 0], [0, 0.25]])")
        cur.execute("SELECT v, a FROM v")
        assert cur.fetchall() == (("0.500000,-1.000000", "[[1.000000,0.000000],[0.000000,0.250000]]"),)


# -- OK packets: affected rows, last insert id, warnings, status -------------------------------------------
def test_affected_rows_and_last_insert_id_are_true(server):
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("CREATE TABLE t (n int)")
        assert cur.execute("INSERT INTO t (n) VALUES (1), (2), (3)") == 3
        assert cur.lastrowid == c.insert_id() and cur.lastrowid > 0
        assert cur.execute("INSERT INTO t (id, n) VALUES (40, 4)") == 1 and cur.lastrowid == 40
        assert cur.execute("UPDATE t SET n = n + 1 WHERE n >= 2") == 3
        assert cur.execute("DELETE FROM t WHERE n > 3") == 2


def test_warning_count_reaches_the_client(server):
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS missing")
        assert cur.warning_count == 1
        cur.execute("SHOW WARNINGS")
        assert cur.fetchall() == (("Note", 1051, "Unknown table 'missing'"),)
        cur.execute("SELECT 1")
        assert cur.warning_count == 0


# -- errors ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("sql, errno, sqlstate, cls", [
    ("SELECT * FROM missing", 1146, "42S02", pymysql.err.ProgrammingError),
    ("SELEC 1", 1064, "42000", pymysql.err.ProgrammingError),
    ("INSERT INTO t (id, n) VALUES (1, 1)", 1062, "23000", pymysql.err.IntegrityError),
    ("SELECT nope FROM t", 1054, "42S22", pymysql.err.OperationalError),
    ("CREATE TABLE t (n int)", 1050, "42S01", pymysql.err.OperationalError),
])
def test_errors_have_our_errno_and_sqlstate(server, sql, errno, sqlstate, cls):
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("CREATE TABLE t (n int)")
        cur.execute("INSERT INTO t (id, n) VALUES (1, 1)")
        with pytest.raises(cls) as info:
            cur.execute(sql)
        assert info.value.args[0] == errno
        assert info.value.sqlstate == sqlstate
        cur.execute("SELECT COUNT(*) FROM t")
        assert cur.fetchall() == ((1,),)        # the failed statement changed nothing


# -- transactions -----------------------------------------------------------------------------------
def test_rollback_undoes_and_commit_keeps(server):
    with connect(server.port, autocommit=False) as c, c.cursor() as cur:
        assert not c.get_autocommit()
        cur.execute("CREATE TABLE t (n int)")
        c.commit()
        cur.execute("INSERT INTO t (n) VALUES (1)")
        assert c.server_status & 1                      # SERVER_STATUS_IN_TRANS
        c.rollback()
        cur.execute("SELECT COUNT(*) FROM t")
        assert cur.fetchall() == ((0,),)
        cur.execute("INSERT INTO t (n) VALUES (2)")
        c.commit()
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("SELECT n FROM t")
        assert cur.fetchall() == ((2,),)


def test_two_clients_see_each_others_commits_only(server):
    with connect(server.port) as setup, setup.cursor() as cur:
        cur.execute("CREATE TABLE t (n int)")
    with connect(server.port, autocommit=False) as a, connect(server.port) as b:
        ca, cb = a.cursor(), b.cursor()
        ca.execute("INSERT INTO t (n) VALUES (1)")
        cb.execute("SELECT COUNT(*) FROM t")
        assert cb.fetchall() == ((0,),)                 # not committed yet
        a.commit()
        cb.execute("SELECT COUNT(*) FROM t")
        assert cb.fetchall() == ((1,),)
        cb.execute("INSERT INTO t (n) VALUES (2)")      # b autocommits
        ca.execute("SELECT SUM(n) FROM t")
        assert ca.fetchall() == ((3,),)


def test_begin_rollback_statements_are_real(server):
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("CREATE TABLE t (n int)")
        cur.execute("BEGIN")
        cur.execute("INSERT INTO t (n) VALUES (1)")
        cur.execute("ROLLBACK")
        cur.execute("START TRANSACTION")
        cur.execute("INSERT INTO t (n) VALUES (2)")
        cur.execute("COMMIT")
        cur.execute("SELECT n FROM t")
        assert cur.fetchall() == ((2,),)


def test_a_client_that_disconnects_mid_transaction_leaves_nothing(server):
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("CREATE TABLE t (n int)")
    gone = connect(server.port, autocommit=False)
    gone.cursor().execute("INSERT INTO t (n) VALUES (1)")
    gone._sock.shutdown(socket.SHUT_RDWR)               # no COM_QUIT, no rollback: the socket just ends
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("INSERT INTO t (n) VALUES (2)")     # would wait for the lock if the dead one held it
        cur.execute("SELECT n FROM t")
        assert cur.fetchall() == ((2,),)


# -- multi-statement text, ping, field list ---------------------------------------------------------
def test_multi_statement_returns_every_result_and_stops_at_error(server):
    with connect(server.port, client_flag=CLIENT.MULTI_STATEMENTS) as c, c.cursor() as cur:
        cur.execute("CREATE TABLE t (n int); INSERT INTO t (n) VALUES (1), (2); SELECT n FROM t ORDER BY n; SELECT 'x'")
        assert cur.rowcount == 0
        assert cur.nextset() and cur.rowcount == 2
        assert cur.nextset() and cur.fetchall() == ((1,), (2,))
        assert cur.nextset() and cur.fetchall() == (("x",),)
        assert not cur.nextset()
        with pytest.raises(pymysql.err.ProgrammingError) as info:
            cur.execute("INSERT INTO t (n) VALUES (3); SELECT * FROM missing; INSERT INTO t (n) VALUES (4)")
            while cur.nextset():
                pass
        assert info.value.args[0] == 1146
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("SELECT n FROM t ORDER BY n")
        assert cur.fetchall() == ((1,), (2,), (3,))


def test_multi_statement_needs_the_client_flag(server):
    with connect(server.port) as c, c.cursor() as cur:
        with pytest.raises(pymysql.err.ProgrammingError) as info:
            cur.execute("SELECT 1; SELECT 2")
        assert info.value.args[0] == 1064


def test_ping_and_field_list(server):
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("CREATE TABLE t (title text, n int)")
        c.ping(reconnect=False)
        c._execute_command(COMMAND.COM_FIELD_LIST, "t\0")
        names = []
        while True:
            packet = c._read_packet()
            if packet.is_eof_packet() or packet.is_ok_packet():
                break
            field = pymysql.protocol.FieldDescriptorPacket(packet._data, c.encoding)
            names.append(field.name)
        assert names == ["id", "title", "n"]


# -- what clients probe at connect time -------------------------------------------------------------------
def test_client_probes(server):
    load_docs(server.port)
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("CREATE INDEX by_tag ON docs (tag)")
        probes = {
            "SELECT @@version_comment LIMIT 1": lambda r: r[0][0].startswith("tesseradb"),
            "SELECT DATABASE()": lambda r: r == (("docs",),),
            "SHOW DATABASES": lambda r: ("docs",) in r and ("information_schema",) in r,
            "SHOW TABLES": lambda r: r == (("docs",),),
            "SHOW COLUMNS FROM docs": lambda r: [x[0] for x in r] == ["id", "title", "body", "tag", "chunks"],
            "SHOW INDEX FROM docs": lambda r: [x[2] for x in r] == ["PRIMARY", "by_tag"],
            "SHOW CREATE TABLE docs": lambda r: r[0][1].startswith("CREATE TABLE `docs`"),
            "SHOW VARIABLES LIKE 'autocommit'": lambda r: r == (("autocommit", "True"),) or r == (("autocommit", "1"),),
            "SHOW VARIABLES LIKE 'sql_mode'": lambda r: "ANSI" not in r[0][1],
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'docs'":
                lambda r: r == (("docs",),),
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'docs' "
            "ORDER BY ordinal_position": lambda r: r[0] == ("id", "bigint") and ("chunks", "float_vector_array") in r,
            "SET NAMES utf8mb4": lambda r: not r,
            "SET NAMES utf8mb4 COLLATE utf8mb4_general_ci": lambda r: not r,
            "USE docs": lambda r: not r,
            "SELECT @@session.transaction_isolation, @@max_allowed_packet": lambda r: r[0][1] > 0,
        }
        for sql, ok in probes.items():
            cur.execute(sql)
            rows = cur.fetchall()
            assert ok(rows), (sql, rows)


def test_show_variables_lists_server_variables(server):
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("SHOW VARIABLES")
        names = {r[0] for r in cur.fetchall()}
        assert {"version", "version_comment", "autocommit", "sql_mode", "max_allowed_packet"} <= names


def test_unicode_round_trip(server):
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("CREATE TABLE t (s text)")
        cur.execute("INSERT INTO t (s) VALUES (%s)", ("naïve 東京 🚀 'quoted' \\ back",))
        cur.execute("SELECT s FROM t")
        assert cur.fetchall() == (("naïve 東京 🚀 'quoted' \\ back",),)


# -- KILL ---------------------------------------------------------------------------------------------
LONG_QUERY = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT COUNT(*) FROM r"


def test_kill_query_interrupts_another_clients_statement(server):
    victim = connect(server.port, read_timeout=120)
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            victim.cursor().execute(LONG_QUERY)
        except pymysql.err.MySQLError as exc:
            outcome.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    with connect(server.port) as killer, killer.cursor() as cur:
        while worker.is_alive() and not outcome:
            cur.execute(f"KILL QUERY {victim.thread_id()}")
            worker.join(timeout=0.2)
    worker.join()
    assert outcome and outcome[0].args[0] == 1317
    with victim.cursor() as cur:                # the connection survives KILL QUERY
        cur.execute("SELECT 1")
        assert cur.fetchall() == ((1,),)
    victim.close()


def test_kill_connection_ends_it(server):
    victim = connect(server.port)
    with connect(server.port) as killer, killer.cursor() as cur:
        cur.execute(f"KILL {victim.thread_id()}")
    with pytest.raises(pymysql.err.MySQLError):
        victim.cursor().execute("SELECT 1")


def test_a_packet_split_across_reads_is_read_whole(server):
    """mysql-mimic read a packet header with read(4), which may return part of it."""
    with connect(server.port) as c:
        query = b"\x03SELECT 'split' AS s"
        packet = len(query).to_bytes(3, "little") + b"\x00" + query
        c._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for i in range(len(packet)):
            c._sock.sendall(packet[i:i + 1])
            time.sleep(0.005)
        c._next_seq_id = 1
        result = pymysql.connections.MySQLResult(c)
        result.read()
        assert result.rows == (("split",),)
