"""DB-API extras: DataFrames (fetchdf / con.sql(...).df()), fetchnumpy, row_factory, Connection.embed."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import tesseradb

TABLE = ("CREATE TABLE t (name string, n int, score float, ok bool, meta json, "
         "v float_vector knn_type='hnsw' knn_dims='3' hnsw_similarity='l2', "
         "a float_vector_array knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')")
ROWS = ("INSERT INTO t (id, name, n, score, ok, meta, v, a) VALUES "
        "(1, 'one', 5, 0.5, 1, '{\"k\": 1}', (1, 2, 3), [[1, 0], [0, 1]]), "
        "(2, 'two', NULL, NULL, 0, NULL, (4, 5, 6), [])")
MODEL_TABLE = ("CREATE TABLE d (body text, v float_vector knn_type='hnsw' hnsw_similarity='cosine' "
               "model_name='Xenova/all-MiniLM-L6-v2' from='body', c float_vector_array knn_type='hnsw' "
               "hnsw_similarity='cosine' model_name='Xenova/all-MiniLM-L6-v2' from='body' "
               "chunk_strategy='sentence' max_tokens='8')")
TEXT = "The cat sat on the mat. Dogs bark at night. Certificates must be rotated every year."


@pytest.fixture
def con():
    c = tesseradb.connect(":memory:")
    c.execute(TABLE)
    c.execute(ROWS)
    yield c
    c.close()


def test_fetchdf_types_and_nulls(con):
    df = con.execute("SELECT id, name, n, score, ok, v, a FROM t ORDER BY id").fetchdf()
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == ["id", "name", "n", "score", "ok", "v", "a"]
    assert df["name"].tolist() == ["one", "two"]
    assert df["n"].isna().tolist() == [False, True] and df["n"][0] == 5
    assert np.allclose(df["v"][0], [1, 2, 3])
    assert len(df["a"][0]) == 2 and len(df["a"][1]) == 0


def test_sql_df_and_the_rest_of_a_cursor(con):
    assert con.sql("SELECT name FROM t ORDER BY id").df()["name"].tolist() == ["one", "two"]
    cur = con.execute("SELECT id FROM t ORDER BY id")
    assert cur.fetchone() == (1,)
    assert cur.fetchdf()["id"].tolist() == [2]               # what is left, like fetchall


@pytest.mark.slow                   # a process of its own
def test_fetchdf_without_pandas_says_how_to_get_it(tmp_path):
    code = ("import sys\n"
            "class NoPandas:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] == 'pandas':\n"
            "            raise ModuleNotFoundError(\"No module named 'pandas'\")\n"
            "sys.meta_path.insert(0, NoPandas())\n"
            "import tesseradb\n"
            "cur = tesseradb.connect(':memory:').execute('SELECT 1 AS a')\n"
            "try:\n    cur.fetchdf()\nexcept tesseradb.InterfaceError as exc:\n    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert "pip install 'tesseradb[pandas]'" in out.stdout, out.stderr


def test_fetchnumpy(con):
    arrays = con.execute("SELECT id, name, n, v, a FROM t ORDER BY id").fetchnumpy()
    assert arrays["id"].tolist() == [1, 2]
    assert arrays["v"].dtype == np.float32 and arrays["v"].shape == (2, 3)
    assert np.ma.is_masked(arrays["n"][1]) and arrays["n"][0] == 5
    assert arrays["a"][0].shape == (2, 2) and arrays["a"][1].shape == (0,)


def test_fetch_without_a_result_set_is_an_error(con):
    cur = con.execute("UPDATE t SET n = 1 WHERE id = 2")
    with pytest.raises(tesseradb.ProgrammingError):
        cur.fetchdf()
    with pytest.raises(tesseradb.ProgrammingError):
        cur.fetchnumpy()


def test_row_factory_row_and_dict(con):
    con.row_factory = tesseradb.Row
    row = con.execute("SELECT id, name AS Label FROM t ORDER BY id").fetchone()
    assert row == (1, "one") and row["label"] == "one" and row["LABEL"] == "one" and row[0] == 1
    assert row.keys() == ["id", "Label"]
    with pytest.raises(IndexError):
        row["missing"]
    cur = con.cursor()
    cur.row_factory = lambda c, r: {d[0]: v for d, v in zip(c.description, r)}
    assert cur.execute("SELECT id, name FROM t ORDER BY id").fetchall() == [
        {"id": 1, "name": "one"}, {"id": 2, "name": "two"}]
    assert [r["id"] for r in cur.execute("SELECT id FROM t ORDER BY id")] == [1, 2]
    assert cur.execute("SELECT id FROM t").fetch_arrow_table().num_rows == 2   # Arrow is not affected


def test_embed_gives_the_vectors_the_engine_stores():
    con = tesseradb.connect(":memory:")
    con.execute(MODEL_TABLE)
    con.execute("INSERT INTO d (id, body) VALUES (1, ?)", (TEXT,))
    stored = con.execute("SELECT v, c FROM d").fetchnumpy()
    one = con.embed(TEXT)
    assert one.shape == (384,) and one.dtype == np.float32
    assert np.array_equal(one, stored["v"][0])
    chunks = con.embed(TEXT, chunk_strategy="sentence", max_tokens=8)
    assert chunks.shape[0] == 3 and np.array_equal(chunks, stored["c"][0])
    many = con.embed([TEXT, "other text"], model="all-MiniLM-L6-v2")
    assert many.shape == (2, 384) and np.array_equal(many[0], one)
    listed = con.embed([TEXT], chunk_strategy="sentence", max_tokens=8)
    assert isinstance(listed, list) and np.array_equal(listed[0], chunks)


@pytest.mark.parametrize("kwargs, message", [
    (dict(chunk_strategy="paragraph"), "unknown chunk_strategy 'paragraph'"),
    (dict(max_tokens=5), "require chunk_strategy"),
    (dict(model="no-such-model"), "unknown model 'no-such-model'"),
    (dict(colour="red"), "unknown setting 'colour'"),
])
def test_embed_checks_settings_like_a_column(kwargs, message):
    con = tesseradb.connect(":memory:")
    with pytest.raises(tesseradb.ProgrammingError, match=message):
        con.embed("text", **kwargs)
