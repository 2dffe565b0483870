"""Which chunk of a found document is its passage (issue 32): for a text query, the query's words count
as well as its vector, so a question whose answer sits in a chunk with the question's words gets that
chunk even when a more general chunk of the page is nearer by vector. A query by vector keeps the
nearest chunk; the document's rank and knn_dist() do not change."""
from __future__ import annotations

import json

import pytest

import tesseradb
from tesseradb import embed

MODEL = "Xenova/all-MiniLM-L6-v2"
PAGE = """# Replication

## Overview
Replication keeps several servers in step: every write made on one node of the cluster is copied to the \
other nodes, so any node can answer reads and the cluster survives the loss of a server.

## Joining
A new server joins an existing cluster with JOIN CLUSTER and receives a full copy of the data from a donor \
before it serves queries.

## Ports
The replication listener uses port 9312 unless the listen directive names another one; open it in the \
firewall between all nodes.
"""
QUESTION = "how does a new node get the data"
ANSWER = "receives a full copy of the data from a donor"


@pytest.fixture(scope="module")
def con():
    c = tesseradb.connect(":memory:", autocommit=True)
    c.execute(f"CREATE TABLE notes (title text, body text, chunks float_vector_array knn_type='hnsw' "
              f"hnsw_similarity='cosine' model_name='{MODEL}' from='title,body' chunk_strategy='markdown' "
              "max_tokens='64' overlap_tokens='0')")
    c.execute("INSERT INTO notes (id, title, body) VALUES (1, 'Replication', ?)", (PAGE,))
    c.execute("INSERT INTO notes (id, title, body) VALUES (2, 'Backups', 'Backups run every night and are kept "
              "for a week. Restores start from the newest snapshot.')")
    c.executemany("INSERT INTO notes (id, title, body) VALUES (?, ?, ?)", [
        (3, "Kitchen", "The kitchen closes at six; label your food in the fridge."),
        (4, "Invoices", "Invoices go out on the first working day of the month."),
        (5, "Certificates", "The replication certificate is renewed every year by the internal authority."),
    ])
    yield c
    c.close()


def _chunks(con, query) -> list[dict]:
    """Every chunk of the page with its distance to ``query`` (a text or a vector)."""
    listed = con.execute("SELECT knn_chunks(100) FROM notes WHERE knn(chunks, 2, ?) AND id = 1", (query,)).fetchone()[0]
    return json.loads(listed)


def test_the_case_is_one_where_the_nearest_chunk_is_not_the_answer(con):
    vector = embed.get_model(MODEL).embed_query(QUESTION).tolist()
    chunks = _chunks(con, vector)
    nearest = min(chunks, key=lambda c: c["dist"])
    assert ANSWER not in nearest["text"]
    assert any(ANSWER in c["text"] for c in chunks)
    passage = con.execute("SELECT knn_chunk_text() FROM notes WHERE knn(chunks, 1, ?)", (vector,)).fetchone()[0]
    assert passage == nearest["text"]             # a query by vector: the nearest chunk, as before


@pytest.mark.parametrize("sql", [
    "SELECT id, knn_chunk_text(), knn_chunk_heading() FROM notes WHERE knn(chunks, 1, ?)",
    "SELECT id, knn_chunk_text(), knn_chunk_heading() FROM notes WHERE hybrid_match(?, chunks) LIMIT 1",
])
def test_a_text_query_gets_the_chunk_that_answers(con, sql):
    doc, text, heading = con.execute(sql, (QUESTION,)).fetchone()
    assert doc == 1
    assert ANSWER in text
    assert heading == "Replication > Joining"


def test_the_passage_functions_agree_and_the_document_distance_is_unchanged(con):
    row = con.execute("SELECT knn_dist(), knn_chunk(), knn_chunks(3), knn_chunk_section(), knn_chunk_window(0, 0) "
                      "FROM notes WHERE knn(chunks, 1, ?)", (QUESTION,)).fetchone()
    dist, chunk, listed, section, window = row
    entries = json.loads(listed)
    assert entries[0]["chunk"] == chunk and ANSWER in entries[0]["text"]
    assert ANSWER in section and ANSWER in window
    assert dist == pytest.approx(min(c["dist"] for c in _chunks(con, QUESTION)), abs=1e-6)   # the nearest's
    assert entries[0]["dist"] > dist


def test_a_question_in_other_words_keeps_the_nearest_chunk(con):
    """No word of the question is in the page: nothing to weigh but the vector."""
    question = "how do machines stay synchronised"
    chunks = _chunks(con, question)
    nearest = min(chunks, key=lambda c: (c["dist"], c["chunk"]))
    passage = con.execute("SELECT knn_chunk() FROM notes WHERE knn(chunks, 1, ?)", (question,)).fetchone()[0]
    assert passage == nearest["chunk"]


def test_the_langchain_store_returns_the_answer_passage(tmp_path):
    from tesseradb.integrations.langchain import TesseraVectorStore
    store = TesseraVectorStore(str(tmp_path / "lc.db"), max_tokens=64, overlap_tokens=0)
    try:
        store.add_texts([PAGE], [{"source": "replication.md"}], ids=["replication"])
        doc = store.similarity_search(QUESTION, k=1)[0]
        assert ANSWER in doc.page_content and doc.page_content != PAGE
        assert doc.metadata["source"] == "replication.md"
    finally:
        store.close()


@pytest.mark.parametrize("tail", ["LIMIT 1", "LIMIT 2", "LIMIT 1 OFFSET 2", "LIMIT 3 OFFSET 1",
                                  "ORDER BY id DESC LIMIT 2", "ORDER BY hybrid_score() LIMIT 2"])
def test_every_row_a_hybrid_query_shows_has_its_passage(con, tail):
    """Passages are worked out only for the rows the query can show; whatever LIMIT, OFFSET and ORDER BY
    pick, each shown row has its own, the same as in the full list."""
    everything = dict(con.execute("SELECT id, knn_chunk_text() FROM notes WHERE hybrid_match(?, chunks)",
                                  (QUESTION,)).fetchall())
    rows = con.execute(f"SELECT id, knn_chunk_text() FROM notes WHERE hybrid_match(?, chunks) {tail}",
                       (QUESTION,)).fetchall()
    assert rows
    for doc, text in rows:
        assert text is not None and text == everything[doc]
