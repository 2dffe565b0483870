"""Issue 28: text a model column drops is visible where Python users look: a
tesseradb.DataTruncatedWarning (once per statement and column, naming both and how many documents
were cut) besides SHOW WARNINGS."""
from __future__ import annotations

import warnings

import pytest

import tesseradb

TRUNCATE = ("CREATE TABLE notes (body text, v float_vector knn_type='hnsw' hnsw_similarity='cosine' "
            "model_name='Xenova/all-MiniLM-L6-v2' from='body')")
LONG = "the replication certificate is rotated every ninety days by the operator " * 90


@pytest.fixture
def con():
    c = tesseradb.connect(":memory:")
    c.execute(TRUNCATE)
    yield c
    c.close()


def test_one_warning_per_statement_naming_column_and_count(con):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        con.executemany("INSERT INTO notes (body) VALUES (?)", [(LONG,), (LONG + " again",), ("short",)])
    cut = [w for w in caught if w.category is tesseradb.DataTruncatedWarning]
    assert len(cut) == 1
    text = str(cut[0].message)
    assert "column 'v'" in text and "2 documents" in text
    assert cut[0].filename == __file__                   # points at the caller's line
    assert len([w for w in con.warnings if "kept" in w[2]]) == 2   # SHOW WARNINGS keeps the detail


def test_no_warning_when_nothing_is_cut(con):
    with warnings.catch_warnings():
        warnings.simplefilter("error", tesseradb.DataTruncatedWarning)
        con.execute("INSERT INTO notes (body) VALUES ('a short note')")
        con.execute("SHOW WARNINGS").fetchall()


def test_show_warnings_does_not_repeat_it(con):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        con.execute("INSERT INTO notes (body) VALUES (?)", (LONG,))
        con.execute("SHOW WARNINGS").fetchall()
    assert len([w for w in caught if w.category is tesseradb.DataTruncatedWarning]) == 1


def test_it_can_be_made_an_error(con):
    with warnings.catch_warnings():
        warnings.simplefilter("error", tesseradb.DataTruncatedWarning)
        with pytest.raises(tesseradb.DataTruncatedWarning):
            con.execute("INSERT INTO notes (body) VALUES (?)", (LONG,))


def test_a_chunked_column_cuts_nothing():
    c = tesseradb.connect(":memory:")
    c.execute("CREATE TABLE d (body text, v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
              "model_name='Xenova/all-MiniLM-L6-v2' from='body' chunk_strategy='recursive' max_tokens='128')")
    with warnings.catch_warnings():
        warnings.simplefilter("error", tesseradb.DataTruncatedWarning)
        c.execute("INSERT INTO d (body) VALUES (?)", (LONG,))
    c.close()


def test_connection_embed_and_the_integrations_embeddings_warn_as_insert_does(con):
    # issue 32: nothing dropped silently - embedding past the model window warns, as INSERT does
    long_text = "Replication copies every write to the standby host. " * 120
    with pytest.warns(tesseradb.DataTruncatedWarning, match=r"embed\(\): the text has [\d,]+ tokens and the "
                      r"model saw 510; a chunk_strategy such as 'recursive' embeds all of it"):
        con.embed(long_text)
    with pytest.warns(tesseradb.DataTruncatedWarning, match=r"embed\(\): text 2 has"):
        con.embed(["short", long_text])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        con.embed(long_text, chunk_strategy="recursive")          # every token embedded: no warning
        con.embed("short")
    from tesseradb.integrations.langchain import TesseraEmbeddings
    from tesseradb.integrations.llama_index import TesseraEmbedding
    with pytest.warns(tesseradb.DataTruncatedWarning):
        TesseraEmbeddings(connection=con).embed_documents([long_text])
    with pytest.warns(tesseradb.DataTruncatedWarning):
        TesseraEmbedding(connection=con).get_text_embedding(long_text)
