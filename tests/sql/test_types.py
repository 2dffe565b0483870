"""Column types: every type and alias round-trips to the Python type a user expects.

| declared                                  | Python value back                                  |
|-------------------------------------------|----------------------------------------------------|
| text, string (+ varchar, char, *text)     | str                                                |
| int, integer, bigint (+ tinyint, ...)     | int                                                |
| float (+ double, real, decimal, numeric)  | float (an integral value stored from an int: int)  |
| bool, boolean                             | bool                                               |
| json                                      | the parsed value: dict, list, str, int, float, bool|
| timestamp (Manticore's)                   | int, Unix seconds                                  |
| date, datetime, time (MySQL's)            | datetime.date, datetime.datetime, datetime.timedelta |
| float_vector                              | list[float]                                        |
| float_vector_array                        | list[list[float]]                                  |
"""
from __future__ import annotations

import datetime

import numpy as np
import pytest

import tesseradb
ALIASES = {
    "text": "text", "tinytext": "text", "mediumtext": "text", "longtext": "text",
    "string": "string", "varchar(32)": "string", "char(8)": "string",
    "int": "int", "integer": "int", "tinyint": "int", "smallint": "int", "mediumint": "int",
    "uint": "int", "int unsigned": "int",
    "bigint": "bigint",
    "float": "float", "double": "float", "real": "float", "decimal(10,2)": "float", "numeric": "float",
    "bool": "bool", "boolean": "bool",
    "json": "json",
    "timestamp": "timestamp", "datetime": "datetime", "date": "date", "time": "time",
}

VALUES = {   # canonical type -> (value written, value read back, Python type)
    "text": ("héllo wörld ✓", "héllo wörld ✓", str),
    "string": ("tag-1", "tag-1", str),
    "int": (-42, -42, int),
    "bigint": (9_000_000_000_000, 9_000_000_000_000, int),
    "float": (2.5, 2.5, float),
    "bool": (True, True, bool),
    "json": ({"a": [1, 2.5, None], "b": {"c": "d"}}, {"a": [1, 2.5, None], "b": {"c": "d"}}, dict),
    "timestamp": ("2024-02-29 12:00:00", 1709208000, int),
    "date": ("2024-02-29", datetime.date(2024, 2, 29), datetime.date),
    "datetime": ("2024-02-29T12:00:00", datetime.datetime(2024, 2, 29, 12, 0), datetime.datetime),
    "time": ("12:30:05", datetime.timedelta(hours=12, minutes=30, seconds=5), datetime.timedelta),
}


@pytest.mark.parametrize("declared, canonical", sorted(ALIASES.items()))
def test_every_type_and_alias_round_trips(con, declared, canonical):
    cur = con.cursor()
    cur.execute(f"CREATE TABLE t (c {declared})")
    assert cur.execute("DESCRIBE t").fetchall()[1][:2] == ("c", declared)     # as declared
    assert cur.execute("SHOW COLUMNS FROM t").fetchall()[1][:2] == ("c", declared)
    written, expected, pytype = VALUES[canonical]
    cur.execute("INSERT INTO t (c) VALUES (?)", [written])
    cur.execute("INSERT INTO t (c) VALUES (NULL)")
    got = cur.execute("SELECT c FROM t ORDER BY id").fetchall()
    assert got == [(expected,), (None,)]
    assert type(got[0][0]) is pytype
    # through a subquery, an alias and SELECT * alike
    assert cur.execute("SELECT x FROM (SELECT c AS x FROM t WHERE id = 1) s").fetchone() == (expected,)
    assert cur.execute("SELECT * FROM t WHERE id = 1").fetchone() == (1, expected)


@pytest.mark.parametrize("declared", ["text", "varchar(255)", "int", "json", "float_vector",
                                      "float_vector_array"])
def test_show_create_keeps_the_spelling(con, declared):
    con.execute(f"CREATE TABLE t (c {declared})")
    create = con.execute("SHOW CREATE TABLE t").fetchone()[1]
    assert f"  `c` {declared}\n" in create


def test_id_is_an_int(con):
    con.execute("CREATE TABLE t (a text)")
    con.execute("INSERT INTO t (a) VALUES ('x')")
    (value,) = con.execute("SELECT id FROM t").fetchone()
    assert type(value) is int


def test_bool(con):
    cur = con.cursor()
    cur.execute("CREATE TABLE t (b bool)")
    cur.execute("INSERT INTO t (b) VALUES (true), (false), (1), (0), (?), (?), (?), (NULL)",
                [True, False, np.bool_(True)])
    assert [r[0] for r in cur.execute("SELECT b FROM t ORDER BY id")] == \
        [True, False, True, False, True, False, True, None]
    assert cur.execute("SELECT COUNT(*) FROM t WHERE b").fetchone() == (4,)
    assert cur.execute("SELECT SUM(b) FROM t").fetchone() == (4,)    # an aggregate is a number again
    for bad in ("2", "-1", "'yes'", "0.5"):
        with pytest.raises(tesseradb.DataError, match="Incorrect boolean value for column 'b'") as info:
            cur.execute(f"INSERT INTO t (b) VALUES ({bad})")
        assert info.value.errno == 1366


def test_json_values_come_back_parsed(con):
    cur = con.cursor()
    cur.execute("CREATE TABLE t (j json)")
    values = [{"k": "v"}, [1, [2, 3]], "text", 7, 1.5, True, False]
    cur.executemany("INSERT INTO t (j) VALUES (?)", [[v if isinstance(v, (dict, list)) else __import__("json").dumps(v)]
                                                       for v in values])
    assert [r[0] for r in cur.execute("SELECT j FROM t ORDER BY id")] == values
    # a Python str is JSON text: it must be valid JSON
    cur.execute("INSERT INTO t (j) VALUES (?)", ['{"from": "text"}'])
    assert cur.execute("SELECT j FROM t ORDER BY id DESC LIMIT 1").fetchone() == ({"from": "text"},)
    with pytest.raises(tesseradb.DataError, match="Invalid JSON text for column 'j'"):
        cur.execute("INSERT INTO t (j) VALUES (?)", ["plain words"])
    # JSON functions work on the stored text, as in MySQL: JSON_EXTRACT gives JSON, ->> unquotes
    assert cur.execute("SELECT JSON_EXTRACT(j, '$.k') FROM t WHERE id = 1").fetchone() == ('"v"',)
    assert cur.execute("SELECT j ->> '$.k' FROM t WHERE id = 1").fetchone() == ("v",)
    assert cur.execute("SELECT j ->> '$[1][0]' FROM t WHERE id = 2").fetchone() == (2,)


def test_timestamp_is_unix_seconds(con):
    cur = con.cursor()
    cur.execute("CREATE TABLE t (ts timestamp)")
    cur.execute("INSERT INTO t (ts) VALUES (0), (1700000000), ('1970-01-02'), ('1970-01-01 01:00:00'), "
                "('1970-01-01T00:01:00'), ('1970-01-01T02:00:00+02:00'), ('1970-01-01T00:00:05Z'), (?)",
                [datetime.datetime(1970, 1, 1, 0, 0, 7)])
    assert [r[0] for r in cur.execute("SELECT ts FROM t ORDER BY id")] == \
        [0, 1700000000, 86400, 3600, 60, 0, 5, 7]
    cur.execute("INSERT INTO t (ts) VALUES (NOW())")
    (now,) = cur.execute("SELECT ts FROM t ORDER BY id DESC LIMIT 1").fetchone()
    assert type(now) is int and now > 1700000000
    cur.execute("UPDATE t SET ts = NOW() WHERE id = 1")
    assert type(cur.execute("SELECT ts FROM t WHERE id = 1").fetchone()[0]) is int
    assert cur.execute("SELECT FROM_UNIXTIME(ts) FROM t WHERE id = 3").fetchone() == ("1970-01-02 00:00:00",)
    with pytest.raises(tesseradb.DataError, match="Incorrect timestamp value for column 'ts'"):
        cur.execute("INSERT INTO t (ts) VALUES ('next tuesday')")
    with pytest.raises(tesseradb.DataError, match="Incorrect timestamp value"):
        cur.execute("INSERT INTO t (ts) VALUES (1.5)")


def test_float_column(con):
    cur = con.cursor()
    cur.execute("CREATE TABLE t (f float)")
    cur.execute("INSERT INTO t (f) VALUES (1.25), (3), ('4.5'), (?), (-0.0)", [np.float32(0.5)])
    assert [r[0] for r in cur.execute("SELECT f FROM t ORDER BY id")] == [1.25, 3, 4.5, 0.5, 0.0]
    with pytest.raises(tesseradb.DataError, match="Incorrect float value for column 'f'"):
        cur.execute("INSERT INTO t (f) VALUES ('abc')")


def test_int_columns_refuse_fractions_and_text(con):
    cur = con.cursor()
    cur.execute("CREATE TABLE t (i int, b bigint)")
    cur.execute("INSERT INTO t (i, b) VALUES ('12', -9223372036854775808)")
    assert cur.execute("SELECT i, b FROM t").fetchone() == (12, -9223372036854775808)
    for bad in ("1.5", "'x'", "''"):
        with pytest.raises(tesseradb.DataError, match="Incorrect integer value for column 'i'"):
            cur.execute(f"INSERT INTO t (i) VALUES ({bad})")


def test_text_columns_store_numbers_as_text_and_refuse_blobs(con):
    cur = con.cursor()
    cur.execute("CREATE TABLE t (a text, s string)")
    cur.execute("INSERT INTO t (a, s) VALUES (42, 1.5)")
    assert cur.execute("SELECT a, s FROM t").fetchone() == ("42", "1.5")
    with pytest.raises(tesseradb.DataError, match="Incorrect string value for column 's'"):
        cur.execute("INSERT INTO t (s) VALUES (?)", [b"\x00\xff"])


def test_vector_types_come_back_as_lists(con):
    cur = con.cursor()
    cur.execute("CREATE TABLE t (one float_vector, many float_vector_array, "
                "k float_vector knn_type='hnsw' knn_dims='3' hnsw_similarity='cosine')")
    cur.execute("INSERT INTO t (one, many, k) VALUES ((0.1, 0.2), [[1, 2], [3, 4.5]], (3, 0, 4))")
    cur.execute("INSERT INTO t (one, many, k) VALUES ((), [], ())")
    cur.execute("INSERT INTO t (id) VALUES (3)")
    got = cur.execute("SELECT one, many, k FROM t ORDER BY id").fetchall()
    # float32 values print at their shortest: 0.1 stays 0.1; cosine vectors are stored normalized
    assert got[0] == ([0.1, 0.2], [[1.0, 2.0], [3.0, 4.5]], [0.6, 0.0, 0.8])
    assert got[1] == (None, [], None)
    assert got[2] == (None, [], None)
    assert type(got[0][0][0]) is float


def test_description_type_codes(con):
    cur = con.cursor()
    cur.execute("CREATE TABLE t (a text, b string, c int, d bigint, e float, f bool, g json, h timestamp, "
                "i float_vector, j float_vector_array)")
    cur.execute("SELECT * FROM t")
    codes = {d[0]: d[1] for d in cur.description}
    assert codes["id"] == tesseradb.ROWID
    for name in "abg":
        assert codes[name] == tesseradb.STRING, name
    for name in "cdefh":
        assert codes[name] == tesseradb.NUMBER, name
    assert codes["h"] == tesseradb.DATETIME
    for name in "ij":
        assert codes[name] == tesseradb.BINARY, name
