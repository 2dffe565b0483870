"""Names in search calls and functions (issue 36): knn() and hybrid_match() on a missing column say it is
missing, in Manticore's words, with the closest column suggested; a misspelled function name gets the
closest function; SHOW CHUNKS FROM t picks the table's one vector column."""
from __future__ import annotations

import pytest

import tesseradb

DOCS = ("CREATE TABLE docs (title text, body text, chunks float_vector_array knn_type='hnsw' "
        "hnsw_similarity='cosine' model_name='Xenova/all-MiniLM-L6-v2' from='title,body')")


@pytest.fixture
def con(tmp_path):
    con = tesseradb.connect(str(tmp_path / "n.db"), autocommit=True)
    con.execute(DOCS)
    con.execute("INSERT INTO docs (title, body) VALUES ('Certificates', 'Rotate them every 90 days.')")
    yield con
    con.close()


@pytest.mark.parametrize("sql, errno, message", [
    ("SELECT id FROM docs WHERE knn(chunk, 3, 'rotate')", 1054,
     "requested KNN search attribute 'chunk' not found; did you mean 'chunks'?"),
    ("SELECT id FROM docs WHERE hybrid_match('rotate', chunk)", 1054,
     "hybrid_match(): column 'chunk' not found; did you mean 'chunks'?"),
    ("SELECT lenght(title) FROM docs", 1305, "FUNCTION LENGHT does not exist; did you mean 'LENGTH'?"),
    ("SELECT id FROM docs WHERE hybrid_match('rotate', title)", 1064,
     "hybrid_match(): column 'title' has no model_name and from (auto-embeddings)"),
])
def test_missing_names_are_named_and_the_closest_suggested(con, sql, errno, message):
    with pytest.raises(tesseradb.Error) as info:
        con.execute(sql)
    assert (info.value.errno, info.value.msg) == (errno, message)


def test_no_suggestion_for_a_function_nothing_resembles(con):
    with pytest.raises(tesseradb.Error) as info:
        con.execute("SELECT zqxw(title) FROM docs")
    assert info.value.msg == "FUNCTION ZQXW does not exist"


def test_show_chunks_from_a_table_picks_its_one_vector_column(con):
    named = con.execute("SHOW CHUNKS FROM docs.chunks").fetchall()
    assert con.execute("SHOW CHUNKS FROM docs").fetchall() == named != []
    assert con.execute("SHOW CHUNKS FROM docs WHERE id = 1 LIMIT 5").fetchall() == named
    con.execute("CREATE TABLE two (a float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2', "
                "b float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')")
    with pytest.raises(tesseradb.Error, match=r"several vector columns; name one: SHOW CHUNKS FROM two.a, two.b"):
        con.execute("SHOW CHUNKS FROM two")
