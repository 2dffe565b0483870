"""Bytes into a json column are MySQL's ERROR 3144 (issue 33: it was an internal error)."""
from __future__ import annotations

import pytest

import tesseradb


@pytest.mark.parametrize("sql, params", [("INSERT INTO t (j) VALUES (?)", (b"\x00\xff",)),
                                         ("INSERT INTO t (j) VALUES (?)", (b'{"a": 1}',)),
                                         ("INSERT INTO t (j) VALUES (X'7b7d')", ())])
def test_bytes_into_json_are_error_3144_and_change_nothing(sql, params):
    con = tesseradb.connect()
    con.execute("CREATE TABLE t (j json)")
    with pytest.raises(tesseradb.DataError) as info:
        con.execute(sql, params)
    assert (info.value.errno, info.value.sqlstate) == (3144, "22032")
    assert info.value.msg == "Cannot create a JSON value from a string with CHARACTER SET 'binary'."
    con.execute("INSERT INTO t (j) VALUES (?)", ('{"a": 1}',))
    assert con.execute("SELECT j FROM t").fetchall() == [({"a": 1},)]
