"""Engine values as the server hands them to mysql-mimic's row writers (clients/server/values.py):
each value what its wire type expects, whether the column's values needed converting or not."""
from __future__ import annotations

from mysql_mimic.types import ColumnType

import tesseradb
from tesseradb.clients.server import values
from tests.server.support import connect


def desc(*columns: tuple[str, str | None]) -> list[tuple]:
    return [(name, decl, None, None, None, None, None) for name, decl in columns]


def test_rows_that_need_nothing_go_out_as_the_engine_returned_them():
    rows = [(1, "a", 0.5), (2, None, None)]
    out, columns = values.result_set(desc(("id", "INTEGER"), ("t", "TEXT"), ("d", "FLOAT")), rows)
    assert out == rows and [type(v) for v in out[0]] == [int, str, float]
    assert [c.type for c in columns] == [ColumnType.LONGLONG, ColumnType.VAR_STRING, ColumnType.DOUBLE]


def test_a_column_that_needs_converting_is_converted_and_the_others_kept():
    rows = [(True, "a", 1), (2, "b", 2)]           # a bool in an integer column: 1, not "True", on the wire
    out, _ = values.result_set(desc(("flag", "INTEGER"), ("t", "TEXT"), ("n", "FLOAT")), rows)
    assert out == [(1, "a", 1.0), (2, "b", 2.0)]
    assert [type(v) for row in out for v in row] == [int, str, float] * 2


def test_vectors_json_bools_and_bytes_take_their_wire_form():
    con = tesseradb.connect(":memory:")
    con.execute("CREATE TABLE t (v float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2', j json, b bool)")
    con.execute("""INSERT INTO t (id, v, j, b) VALUES (1, (0.5, 0.25), '{"a": 1}', 1)""")
    cur = con.execute("SELECT v, j, b, id, x'0001' FROM t")
    out, columns = values.result_set(cur.description, cur.fetchall())
    assert out == [("0.500000,0.250000", '{"a": 1}', 1, 1, b"\x00\x01")]
    assert type(out[0][2]) is int            # a bool goes out as 1, never "True"
    assert [c.type for c in columns] == [ColumnType.VAR_STRING, ColumnType.VAR_STRING, ColumnType.TINY,
                                         ColumnType.LONGLONG, ColumnType.BLOB]


def test_a_computed_column_is_typed_from_its_values():
    out, columns = values.result_set(desc(("n", None), ("m", None)), [(1, 1), (2, 2.5)])
    assert [c.type for c in columns] == [ColumnType.LONGLONG, ColumnType.DOUBLE]
    assert out == [(1, 1.0), (2, 2.5)] and type(out[0][1]) is float


def test_a_result_shape_run_again_follows_set_names(server):
    """The header packets of a result shape are kept per connection; column names still come in the
    character set the client asked for last (SET NAMES), each time the same SELECT runs."""
    with connect(server.port) as c, c.cursor() as cur:
        for charset in ("utf8mb4", "latin1", "utf8mb4", "latin1"):
            c.set_character_set(charset)
            for _ in range(2):
                cur.execute("SELECT 1 AS `café`, 'creme' AS `brûlée`")
                assert [d[0] for d in cur.description] == ["café", "brûlée"]
                assert cur.fetchall() == ((1, "creme"),)
