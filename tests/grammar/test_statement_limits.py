"""Pathological statements are refused before the tokenizer and parser see them (issue 21); how
fast is measured in tests/benchmarks/bench_boundary.py, not here."""
from __future__ import annotations

import pytest

import tesseradb
from tesseradb.grammar.limits import MAX_DEPTH, MAX_IN_LIST, MAX_TERMS, too_complex

PATHOLOGICAL = {
    "OR chain": "SELECT n FROM t WHERE " + " OR ".join(f"n = {i}" for i in range(100_000)),
    "IN list": "SELECT n FROM t WHERE n IN (" + ",".join(str(i) for i in range(200_000)) + ")",
    "nesting": "SELECT " + "(" * 5000 + "1" + ")" * 5000,
    "plus chain": "SELECT " + "+".join(["1"] * 100_000),
    "NOT chain": "SELECT " + "NOT " * 10_000 + "1",
}


@pytest.mark.parametrize("name", list(PATHOLOGICAL))
def test_pathological_statements_are_refused_and_change_nothing(name):
    con = tesseradb.connect()
    con.execute("CREATE TABLE t (n int)")
    con.execute("INSERT INTO t (n) VALUES (1)")
    with pytest.raises(tesseradb.ProgrammingError) as info:
        con.execute(PATHOLOGICAL[name])
    assert info.value.errno == 1064 and "too complex" in info.value.msg
    assert con.execute("SELECT n FROM t").fetchall() == [(1,)]


def test_limits_are_where_they_say():
    assert too_complex("SELECT " + "(" * MAX_DEPTH + "1" + ")" * MAX_DEPTH) is None
    assert "nested" in too_complex("SELECT " + "(" * (MAX_DEPTH + 1) + "1" + ")" * (MAX_DEPTH + 1))
    assert too_complex("SELECT " + "+".join(["1"] * (MAX_TERMS + 1))) is None
    assert "operators" in too_complex("SELECT " + "+".join(["1"] * (MAX_TERMS + 2)))
    in_list = "SELECT 1 WHERE 1 IN ({})"
    assert too_complex(in_list.format(",".join(["1"] * MAX_IN_LIST))) is None
    assert "IN list" in too_complex(in_list.format(",".join(["1"] * (MAX_IN_LIST + 1))))


def test_what_looks_complex_inside_strings_and_comments_is_not():
    words = " OR ".join(["x"] * 5000)
    assert too_complex(f"SELECT '{words}' AS a") is None
    assert too_complex(f"SELECT 1 /* {words} */") is None
    assert too_complex("SELECT '" + "(" * 5000 + "' AS a") is None


def test_a_long_extended_insert_is_not_limited():
    """What mysqldump writes: one INSERT with thousands of rows of negative numbers and text."""
    con = tesseradb.connect()
    con.execute("CREATE TABLE t (n int, s string)")
    rows = ",".join(f"({-i}, 'a-b OR c ({i})')" for i in range(5000))
    assert con.execute(f"INSERT INTO t (n, s) VALUES {rows}").rowcount == 5000
    separate = "; ".join(["SELECT 1 WHERE 1 = 1 AND 2 = 2"] * 600)
    assert too_complex(separate) is None          # statements of a script are counted one by one
