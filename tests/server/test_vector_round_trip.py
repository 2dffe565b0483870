"""A vector read over the wire can be written back as it came (issue 33): SELECT sends a float_vector
as ``0.100000,0.200000`` and a float_vector_array as ``[[...],[...]]`` (Manticore's text), so a client
that reads a row and writes it back with a bound parameter sends that string. Exactly that form is
taken for a column of that kind; every other string is still refused with Manticore's error."""
from __future__ import annotations

import mysql.connector
import pymysql
import pytest

from tests.server.support import connect, mariadb

DDL = ("CREATE TABLE t (tag string, "
       "v float_vector knn_type='hnsw' knn_dims='3' hnsw_similarity='cosine', "
       "a float_vector_array knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')")
ROWS = "INSERT INTO t (id, tag, v, a) VALUES (1, 'x', (1, 2, 3), ((0.5, -1.25), (3, 4))), (2, 'empty', (), ())"


@pytest.fixture
def port(server):
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute(DDL)
        cur.execute(ROWS)
    return server.port


def _read(cur, ids: tuple[int, int]) -> list[tuple]:
    cur.execute(f"SELECT id, tag, v, a FROM t WHERE id IN {ids} ORDER BY id")
    return [tuple(r) for r in cur.fetchall()]


def _floats(text: str | None) -> list[float]:
    return [float(x) for x in text.split(",")] if text else []


def test_pymysql_writes_back_what_it_read(port):
    with connect(port) as c, c.cursor() as cur:
        first = _read(cur, (1, 2))
        assert _floats(first[0][2]) == pytest.approx([0.267261, 0.534522, 0.801784], abs=2e-6)   # cosine: normalized
        assert first[0][3] == "[[0.500000,-1.250000],[3.000000,4.000000]]"
        assert first[1][3] == "[]"
        for n, (_, tag, v, a) in enumerate(first, start=10):
            cur.execute("INSERT INTO t (id, tag, v, a) VALUES (%s, %s, %s, %s)", (n, tag, v, a))
        again = _read(cur, (10, 11))
        assert [r[1:] for r in again] == [r[1:] for r in first]
        cur.execute("UPDATE t SET v = %s, a = %s WHERE id = 2", (first[0][2], first[0][3]))
        assert _read(cur, (2, 2))[0][2:] == first[0][2:]
        cur.execute("SELECT id FROM t WHERE knn(a, 5, (3, 4)) ORDER BY id")     # written back: searchable
        assert [r[0] for r in cur.fetchall()] == [1, 2, 10]


def test_mysql_connector_binds_the_text_as_a_parameter(port):
    con = mysql.connector.connect(host="127.0.0.1", port=port, user="app", database="docs", autocommit=True)
    try:
        cur = con.cursor(prepared=True)            # COM_STMT_EXECUTE: the string travels as a parameter
        cur.execute("SELECT v, a FROM t WHERE id = ?", (1,))
        v, a = (x.decode() if isinstance(x, (bytes, bytearray)) else x for x in cur.fetchone())
        cur.execute("INSERT INTO t (id, tag, v, a) VALUES (?, ?, ?, ?)", (20, "bound", v, a))
        cur.execute("SELECT v, a FROM t WHERE id = ?", (20,))
        back = [x.decode() if isinstance(x, (bytes, bytearray)) else x for x in cur.fetchone()]
        assert back == [v, a]
        assert _floats(v) == pytest.approx([0.267261, 0.534522, 0.801784], abs=1e-6)
    finally:
        con.close()


def test_the_mariadb_client_writes_back_what_it_printed(port):
    out = mariadb(port, "-B", "-N", sql="SELECT v, a FROM t WHERE id = 1", check=True).stdout
    v, a = out.rstrip("\n").split("\t")
    mariadb(port, sql=f"INSERT INTO t (id, tag, v, a) VALUES (30, 'cli', '{v}', '{a}')", check=True)
    again = mariadb(port, "-B", "-N", sql="SELECT v, a FROM t WHERE id = 30", check=True).stdout
    assert again.rstrip("\n").split("\t") == [v, a]


@pytest.mark.parametrize("column, text", [
    ("v", "[0.9,0.1,0.2]"),            # Manticore refuses the bracketed string too
    ("v", "0.1, 0.2, 0.3"),
    ("v", "1,2,3"),
    ("v", "0.1,0.2,abc"),
    ("a", "[0.5,-1.25]"),
    ("a", "0.500000,-1.250000"),
    ("a", "[[0.5,-1.25]"),
])
def test_any_other_string_is_refused_and_changes_nothing(port, column, text):
    with connect(port) as c, c.cursor() as cur:
        with pytest.raises(pymysql.err.MySQLError) as err:
            cur.execute(f"INSERT INTO t (id, {column}) VALUES (40, %s)", (text,))
        assert f"column '{column}': incompatible value specified for a float vector column" in err.value.args[1]
        cur.execute("SELECT COUNT(*) FROM t WHERE id = 40")
        assert cur.fetchall()[0][0] == 0
