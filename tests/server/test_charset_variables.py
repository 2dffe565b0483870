"""One answer for a served connection's character set variables, whoever reads them: mysql-mimic's
session (``SELECT @@x`` without FROM, ``SHOW VARIABLES``) and the engine (``@@x`` in a statement it
runs: with FROM, in a derived table, a UNION, a SET @v). The server pushes its session's values into
the engine connection when they change (clients/server/session.py, ``Connection.serve_charsets``)."""
from __future__ import annotations

import mysql.connector
import pymysql
import pytest

from tests.server.support import connect
from tests.server.test_charsets import HandshakeOnly, rows

VARIABLES = ("character_set_client", "character_set_connection", "character_set_results",
             "character_set_database", "character_set_server", "collation_connection",
             "collation_database", "collation_server")
READ = "@@character_set_results, @@session.character_set_client, @@collation_connection"


@pytest.fixture
def stored(server):
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("CREATE TABLE t (body text)")
        cur.execute("INSERT INTO t (id, body) VALUES (1, 'café')")
    return server


def every_reading(cur) -> set[tuple]:
    """(results, client, collation) as each form reads them; one element when they all agree."""
    forms = [rows(cur, f"SELECT {READ}"),                                   # mysql-mimic's
             rows(cur, f"SELECT {READ} FROM t LIMIT 1"),                    # the engine's, from here on
             rows(cur, "SELECT r, c, k FROM (SELECT @@character_set_results AS r, @@character_set_client AS c,"
                       " @@collation_connection AS k) AS d"),
             rows(cur, f"SELECT {READ} UNION ALL SELECT {READ} FROM t")]
    cur.execute("SET @r = @@character_set_results, @c = @@character_set_client, @k = @@collation_connection")
    forms.append(rows(cur, "SELECT @r, @c, @k"))
    shown = dict(rows(cur, "SHOW SESSION VARIABLES LIKE 'c%'"))
    forms.append([(shown["character_set_results"], shown["character_set_client"], shown["collation_connection"])])
    return {row for form in forms for row in form}


def test_set_names_latin1_then_utf8mb4_every_form_agrees(stored):
    with connect(stored.port) as c, c.cursor() as cur:
        assert every_reading(cur) == {("utf8mb4", "utf8mb4", "utf8mb4_general_ci")}
        c.set_character_set("latin1")                                   # PyMySQL's SET NAMES latin1
        assert every_reading(cur) == {("latin1", "latin1", "latin1_swedish_ci")}
        assert rows(cur, "SELECT body FROM t") == [("café",)]            # and the text is latin1's
        c.set_character_set("latin1", "latin1_bin")
        assert every_reading(cur) == {("latin1", "latin1", "latin1_bin")}
        c.set_character_set("utf8mb4")
        assert every_reading(cur) == {("utf8mb4", "utf8mb4", "utf8mb4_general_ci")}


def test_every_character_set_variable_reads_alike_in_both(stored):
    """All eight, for a default client and after SET CHARACTER SET / SET character_set_connection."""
    names = ", ".join(f"@@{n}" for n in VARIABLES)
    with connect(stored.port) as c, c.cursor() as cur:
        for setting in (None, "SET CHARACTER SET cp1251", "SET character_set_connection = 'greek'",
                        "SET collation_connection = 'utf8mb4_bin'", "SET NAMES DEFAULT"):
            if setting:
                cur.execute(setting)
            mimic = rows(cur, f"SELECT {names}")
            assert rows(cur, f"SELECT {names} FROM t") == mimic
            shown = dict(rows(cur, "SHOW VARIABLES"))
            assert tuple(shown[n] for n in VARIABLES) == mimic[0]
        cur.execute("SET CHARACTER SET cp1251")
        assert rows(cur, "SELECT @@character_set_connection, @@character_set_results FROM t") == \
            [("utf8mb4", "cp1251")]


def test_results_null_and_binary_read_alike(stored):
    with connect(stored.port, charset="latin1") as c, c.cursor() as cur:
        cur.execute("SET character_set_results = NULL")
        assert every_reading(cur) == {(None, "latin1", "latin1_swedish_ci")}
        assert rows(cur, "SELECT @@character_set_results IS NULL FROM t") == [(1,)]
        cur.execute("SET character_set_results = binary")     # text columns come as bytes (charset 63)
        assert rows(cur, f"SELECT {READ}") == rows(cur, f"SELECT {READ} FROM t") == \
            [(b"binary", b"latin1", b"latin1_swedish_ci")]


@pytest.mark.parametrize("sql, errno", [
    ("SET NAMES latin1, character_set_results = 'xyz'", 1115),
    ("SET NAMES ucs2", 1231),
    ("SET character_set_client = NULL", 1231),
    ("SET NAMES latin1 COLLATE utf8mb4_bin", 1253),
    ("SET @x = 1, NAMES latin1", 1235),                     # the engine's variable and the server's
    ("SET NAMES latin1, @x = 1", 1235),
    ("SET @x = 1, @@session.character_set_results = NULL", 1235),
])
def test_a_failed_set_changes_neither(stored, sql, errno):
    with connect(stored.port) as c, c.cursor() as cur:
        with pytest.raises(pymysql.err.MySQLError) as caught:
            cur.execute(sql)
        assert caught.value.args[0] == errno
        assert every_reading(cur) == {("utf8mb4", "utf8mb4", "utf8mb4_general_ci")}
        assert rows(cur, "SELECT @x") == [(None,)]
        assert rows(cur, "SELECT body FROM t") == [("café",)]


def test_a_user_variable_may_still_read_them(stored):
    with connect(stored.port, charset="latin1") as c, c.cursor() as cur:
        cur.execute("SET @was = @@character_set_results, @n = 'NAMES'")
        assert rows(cur, "SELECT @was, @n") == [("latin1", "NAMES")]


def test_the_handshakes_character_set_alone_reaches_the_engine(stored):
    c = HandshakeOnly(host="127.0.0.1", port=stored.port, user="app", database="docs", autocommit=True,
                      charset="latin1")
    with c, c.cursor() as cur:
        assert every_reading(cur) == {("latin1", "latin1", "latin1_swedish_ci")}


def test_change_user_and_reset_reach_the_engine(stored):
    con = mysql.connector.connect(host="127.0.0.1", port=stored.port, user="app", database="docs", autocommit=True)
    try:
        for collation, expected in [(8, ("latin1", "latin1", "latin1_swedish_ci")),
                                    (45, ("utf8mb4", "utf8mb4", "utf8mb4_general_ci")),
                                    (8, ("latin1", "latin1", "latin1_swedish_ci"))]:
            con.cmd_change_user(username="app", database="docs", charset=collation)
            cur = con.cursor()
            cur.execute(f"SELECT {READ} FROM t")
            assert tuple(cur.fetchall()[0]) == expected
            cur.close()
        con.cmd_reset_connection()                  # keeps the client's character set, as MySQL does
        cur = con.cursor()
        cur.execute(f"SELECT {READ} FROM t UNION ALL SELECT {READ}")
        assert [tuple(r) for r in cur.fetchall()] == [("latin1", "latin1", "latin1_swedish_ci")] * 2
        cur.close()
    finally:
        con.close()
