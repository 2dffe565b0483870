"""mysql-connector-python with server-side prepared statements (``prepared=True``): parameters travel
in COM_STMT_EXECUTE and are bound by the engine, never pasted into the SQL text."""
from __future__ import annotations

import mysql.connector
import pytest

from tests.server.support import DOCS, load_docs

ATTACKS = [
    "it's",
    "x'); DROP TABLE t; --",
    "' OR '1'='1",
    "\\'; DELETE FROM t; #",
    'double "quotes" and `backticks`',
    "?",
    "a ? b ' ? '",
    "naïve 東京 🚀",
    "",
]


@pytest.fixture
def mc(server):
    con = mysql.connector.connect(host="127.0.0.1", port=server.port, user="app", database="docs")
    yield con
    con.close()


def test_prepared_parameters_are_bound_not_spliced(mc):
    cur = mc.cursor(prepared=True)
    cur.execute("CREATE TABLE t (s text, n int)")
    for i, text in enumerate(ATTACKS):
        cur.execute("INSERT INTO t (s, n) VALUES (?, ?)", (text, i))
        assert cur.rowcount == 1
    mc.commit()
    cur.execute("SELECT s FROM t ORDER BY n")
    assert [row[0] for row in cur.fetchall()] == ATTACKS
    for text in ATTACKS:
        cur.execute("SELECT COUNT(*) FROM t WHERE s = ?", (text,))
        assert cur.fetchall() == [(1,)], text
    cur.execute("SELECT COUNT(*) FROM t WHERE s = ? OR n = ?", ("' OR '1'='1", -1))
    assert cur.fetchall() == [(1,)]


def test_question_mark_inside_a_literal_is_not_a_parameter(mc):
    cur = mc.cursor(prepared=True)
    cur.execute("SELECT 'it''s ?', ? AS p", ("bound",))
    assert cur.fetchall() == [("it's ?", "bound")]


def test_prepared_types_round_trip(mc):
    cur = mc.cursor(prepared=True)
    cur.execute("CREATE TABLE t (i bigint, f float, s string, b bool, j json)")
    cur.execute("INSERT INTO t (id, i, f, s, b, j) VALUES (?, ?, ?, ?, ?, ?)",
                (5, -(2 ** 40), 2.5, "str", True, '{"a": [1, 2]}'))
    assert cur.lastrowid == 5
    mc.commit()
    cur.execute("SELECT id, i, f, s, b, j FROM t WHERE id = ?", (5,))
    assert cur.fetchall() == [(5, -(2 ** 40), 2.5, "str", 1, '{"a": [1, 2]}')]
    cur.execute("SELECT s FROM t WHERE s = ?", (None,))
    assert cur.fetchall() == []


def test_prepared_knn_with_a_bound_query_text(server, mc):
    load_docs(server.port)
    cur = mc.cursor(prepared=True)
    cur.execute("SELECT id, title FROM docs WHERE knn(chunks, 1, ?) AND tag = ?",
                ("what is in a nightly backup", "ops"))
    assert cur.fetchall() == [(3, "Backups")]
    cur.execute("SELECT title FROM docs WHERE knn(chunks, 3, ?) ORDER BY id", ("x'); DROP TABLE docs; --",))
    assert [r[0] for r in cur.fetchall()] == [d[0] for d in DOCS]


def test_prepared_errors_and_transactions(mc):
    cur = mc.cursor(prepared=True)
    cur.execute("CREATE TABLE t (n int)")
    mc.commit()
    with pytest.raises(mysql.connector.errors.ProgrammingError) as info:
        cur.execute("SELECT * FROM missing WHERE n = ?", (1,))
    assert (info.value.errno, info.value.sqlstate) == (1146, "42S02")
    cur.execute("INSERT INTO t (id, n) VALUES (?, ?)", (1, 1))
    with pytest.raises(mysql.connector.errors.IntegrityError) as info:
        cur.execute("INSERT INTO t (id, n) VALUES (?, ?)", (1, 2))
    assert (info.value.errno, info.value.sqlstate) == (1062, "23000")
    mc.rollback()                               # connector's autocommit is off: the first insert goes too
    cur.execute("SELECT COUNT(*) FROM t")
    assert cur.fetchall() == [(0,)]


def test_plain_cursor_and_probes(mc):
    cur = mc.cursor()
    cur.execute("SELECT @@version_comment")
    assert cur.fetchall()[0][0].startswith("tesseradb")
    cur.execute("SHOW DATABASES")
    assert ("docs",) in cur.fetchall()
    assert mc.is_connected()
    mc.ping()
