"""MySQL's sql_select_limit and the DB-API's max_result_bytes: how many rows a SELECT hands back."""
from __future__ import annotations

import tesseradb

COUNT = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10) SELECT x FROM c"


def test_sql_select_limit_applies_when_the_select_has_no_limit():
    con = tesseradb.connect()
    con.execute("SET sql_select_limit = 3")
    assert con.execute(COUNT).fetchall() == [(1,), (2,), (3,)]
    assert con.execute(COUNT + " LIMIT 5").fetchall() == [(n,) for n in range(1, 6)]   # its own LIMIT wins
    con.execute("CREATE TABLE t (a int)")
    con.execute("INSERT INTO t (a) " + COUNT)                                          # not a client's SELECT
    con.execute("SET sql_select_limit = DEFAULT")
    assert con.execute("SELECT COUNT(*) FROM t").fetchall() == [(10,)]


def test_max_result_bytes_cuts_the_rows_with_a_warning():
    con = tesseradb.connect()
    con.max_result_bytes = 5000
    rows = con.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100) "
                       "SELECT x, REPEAT('a', 1000) FROM c").fetchall()
    assert 0 < len(rows) < 100
    assert [w[1] for w in con.warnings] == [1301]
    assert len(con.execute("SELECT REPEAT('b', 100000)").fetchall()) == 1                # one row always
    con.max_result_bytes = None
    assert len(con.execute(COUNT).fetchall()) == 10
