"""Errors carry what their message says as fields (issue 31 item 2): a program reads
``error.fields`` (row, id, key, value, column, table), never the text."""
from __future__ import annotations

import pytest

import tesseradb


@pytest.fixture
def con():
    con = tesseradb.connect(":memory:")
    yield con
    con.close()


def test_a_repeated_id_names_the_id(con):
    con.execute("CREATE TABLE t (title text)")
    con.execute("INSERT INTO t (id, title) VALUES (5, 'a')")
    with pytest.raises(tesseradb.IntegrityError) as caught:
        con.execute("INSERT INTO t (id, title) VALUES (5, 'b')")
    assert caught.value.errno == 1062 and caught.value.fields["id"] == 5
    assert caught.value.msg == "duplicate id '5'"


def test_a_declared_key_names_the_key_and_value(con):
    con.execute("CREATE TABLE k (id bigint PRIMARY KEY, code string UNIQUE)")
    con.execute("INSERT INTO k VALUES (1, 'x')")
    with pytest.raises(tesseradb.IntegrityError) as caught:
        con.execute("INSERT INTO k VALUES (2, 'x')")
    assert caught.value.fields == {"key": "code", "value": "x"}
    with pytest.raises(tesseradb.IntegrityError) as caught:
        con.executemany("INSERT INTO k VALUES (?, ?)", [(3, 'y'), (3, 'z')])
    assert caught.value.fields["key"] == "PRIMARY" and caught.value.fields["id"] == 3


def test_a_bad_vector_value_names_its_row_and_column(con):
    con.execute("CREATE TABLE v (title text, e float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')")
    with pytest.raises(tesseradb.DataError) as caught:
        con.executemany("INSERT INTO v (title, e) VALUES (?, ?)", [("a", [1, 2]), ("b", [1, "x"])])
    assert caught.value.fields["row"] == 2 and caught.value.fields["column"] == "e"
    assert caught.value.msg.startswith("row 2, column 'e': ")


def test_unknown_names_carry_the_name_and_the_suggestion(con):
    con.execute("CREATE TABLE products (title text)")
    with pytest.raises(tesseradb.ProgrammingError) as caught:
        con.execute("SELECT * FROM prodcts")
    assert caught.value.fields == {"table": "prodcts", "suggestion": "products"}
    with pytest.raises(tesseradb.ProgrammingError) as caught:
        con.execute("INSERT INTO products (titel) VALUES ('a')")
    assert caught.value.fields["column"] == "titel" and caught.value.fields["suggestion"] == "title"
    assert caught.value.msg.endswith("did you mean 'title'?")


def test_a_load_data_error_names_the_line_from_the_fields(con, tmp_path):
    con.execute("CREATE TABLE t (title text)")
    data = tmp_path / "rows.csv"
    data.write_text("1,a\n2,b\n1,c\n")
    with pytest.raises(tesseradb.IntegrityError) as caught:
        con.execute(f"LOAD DATA INFILE '{data}' INTO TABLE t FIELDS TERMINATED BY ',' (id, title)")
    assert caught.value.msg == f"'{data}' line 3: duplicate id '1'" and caught.value.fields["id"] == 1
    assert con.execute("SELECT COUNT(*) FROM t").fetchone() == (0,)
