"""Which passage matched: knn_chunk(), knn_chunk_text(), knn_chunk_start(), knn_chunk_end(),
knn_chunks(n), checked against a brute-force reference (the same model and chunker run directly,
every chunk of every document scored with numpy)."""
from __future__ import annotations

import json
import random
from pathlib import Path

import apsw
import numpy as np
import pytest

import tesseradb
from tesseradb import embed
from tesseradb.embed import chunking
from tesseradb.vectors import passage_words

MODEL = "Xenova/all-MiniLM-L6-v2"
MAX_TOKENS, OVERLAP = 24, 6

TOPICS = [
    "Backups run every night and copy the data volume to the standby host.",
    "To rotate the TLS certificate, request a new one from the internal authority.",
    "Le café est servi à huit heures; les réunions commencent à neuf heures précises.",
    "東京の天気は晴れです。明日は雨が降るかもしれません。",
    "Deploy the release 🚀 after the tests pass ✅ and the changelog is written.",
    "Vacuum the largest tables when the disk is more than eighty percent full.",
    "Ελληνικά κείμενα: η βάση δεδομένων αποθηκεύει διανύσματα.",
    "The kitchen closes at six; please label your food in the fridge.",
    "Replication lag above thirty seconds pages the on-call engineer.",
    "Grüße aus München: die Straßenbahn fährt über die Brücke.",
    "数据库中的向量索引可以加速最近邻搜索。",
    "Invoices are sent on the first working day of every month. 💶",
]
QUERIES = [
    "how do I rotate certificates", "when are backups taken", "coffee time in the morning",
    "weather in Tokyo", "release deployment checklist", "disk almost full", "greek database text",
    "food in the office fridge", "replication lag alert", "tram in Munich", "nearest neighbour index",
    "monthly invoices", "rocket emoji", "雨", "sécurité des données",
]


def _documents() -> list[tuple[int, str, str]]:
    rng = random.Random(12)
    docs = []
    for doc_id in range(1, 61):
        sentences = rng.sample(TOPICS, rng.randint(3, 6))
        title = rng.choice(["Notes", "Runbook", "Ops página", "メモ", "Journal 📓"]) + f" {doc_id}"
        docs.append((doc_id, title, ("\n\n" if doc_id % 2 else " ").join(sentences)))
    return docs


@pytest.fixture(scope="module")
def model():
    return embed.get_model(MODEL)


@pytest.fixture(scope="module")
def corpus(model, tmp_path_factory):
    """The table, and the reference: every document's chunk spans and vectors, computed directly."""
    path = str(tmp_path_factory.mktemp("passages") / "p.db")
    con = tesseradb.connect(path)
    cur = con.cursor()
    cur.execute(f"CREATE TABLE docs (title text, body text, v float_vector_array knn_type='hnsw' "
                f"hnsw_similarity='cosine' model_name='{MODEL}' from='title,body' chunk_strategy='recursive' "
                f"max_tokens='{MAX_TOKENS}' overlap_tokens='{OVERLAP}')")
    docs = _documents()
    cur.executemany("INSERT INTO docs (id, title, body) VALUES (?, ?, ?)", docs)
    con.commit()
    reference = {}
    for doc_id, title, body in docs:
        text = f"{title} {body}"
        plan = chunking.plan_chunks(text, model.token_offsets(text), strategy="recursive", max_tokens=MAX_TOKENS,
                                    overlap_tokens=OVERLAP, window=model.window)
        spans = [(c.start, c.end) for c in plan.chunks]
        reference[doc_id] = (text, spans, model.embed([text[s:e] for s, e in spans]))
    yield cur, reference
    con.close()


def _reference_distances(reference, model, question):
    q = model.embed_query(question)
    return {doc: 1.0 - vectors @ q for doc, (_, _, vectors) in reference.items()}


def test_the_documents_have_several_chunks_and_non_ascii_text(corpus):
    cur, reference = corpus
    assert all(len(spans) >= 2 for _, spans, _ in reference.values())
    counts = dict(cur.execute("SELECT id, LENGTH(v) FROM docs").fetchall())
    assert counts == {doc: len(spans) for doc, (_, spans, _) in reference.items()}
    assert any(any(ord(ch) > 0xFFFF for ch in text) for text, _, _ in reference.values())   # emoji


@pytest.mark.parametrize("question", QUERIES)
def test_knn_chunk_is_the_nearest_chunk_and_its_span(corpus, model, question):
    """A query by vector has no words: the passage is the nearest chunk (a text query: the next tests)."""
    cur, reference = corpus
    dists = _reference_distances(reference, model, question)
    rows = cur.execute("SELECT id, knn_dist(), knn_chunk(), knn_chunk_start(), knn_chunk_end(), knn_chunk_text() "
                       "FROM docs WHERE knn(v, 8, ?)", [model.embed_query(question).tolist()]).fetchall()
    assert len(rows) == 8
    best_doc = min(dists, key=lambda d: (dists[d].min(), d))
    assert rows[0][0] == best_doc
    for doc, dist, chunk, start, end, text in rows:
        source, spans, _ = reference[doc]
        assert dists[doc][chunk - 1] == pytest.approx(dists[doc].min(), abs=1e-6)
        assert dist == pytest.approx(dists[doc].min(), abs=1e-5)
        assert (start, end) == spans[chunk - 1]
        assert text == source[start:end]


@pytest.mark.parametrize("question", QUERIES[:8])
@pytest.mark.parametrize("n", [1, 3, 100])
def test_knn_chunks_are_the_exact_n_best(corpus, model, question, n):
    cur, reference = corpus
    dists = _reference_distances(reference, model, question)
    rows = cur.execute("SELECT id, knn_chunks(?), knn_chunk() FROM docs WHERE knn(v, 6, ?)",
                       [n, model.embed_query(question).tolist()]).fetchall()
    for doc, listed, best in rows:
        entries = json.loads(listed)
        source, spans, _ = reference[doc]
        expected = np.sort(dists[doc])[:n]
        assert len(entries) == min(n, len(spans))
        assert [e["dist"] for e in entries] == pytest.approx(expected.tolist(), abs=1e-5)
        assert entries[0]["chunk"] == best
        assert [e["dist"] for e in entries] == sorted(e["dist"] for e in entries)
        for e in entries:
            assert e["dist"] == pytest.approx(float(dists[doc][e["chunk"] - 1]), abs=1e-5)
            assert (e["start"], e["end"]) == spans[e["chunk"] - 1]
            assert e["text"] == source[e["start"]:e["end"]]


def _reference_words(reference, question):
    """Every chunk's BM25 for the question's words, from an FTS5 index of the reference chunks built here
    the way the column's chunk index is (heading field empty: no headings; body: the chunk's text),
    queried with hybrid_match()'s natural-language expression, the body's BM25 alone."""
    con = apsw.Connection(":memory:")
    con.execute("CREATE VIRTUAL TABLE r USING fts5(heading, body, tokenize=\"porter unicode61 tokenchars '_'\")")
    keys = []
    for doc, (text, spans, _) in reference.items():
        for ordinal, (start, end) in enumerate(spans):
            keys.append((doc, ordinal))
            con.execute("INSERT INTO r (rowid, heading, body) VALUES (?, '', ?)", (len(keys), text[start:end]))
    expression = passage_words.expression(_NoOptions(), question)
    scores = {doc: np.zeros(len(spans)) for doc, (_, spans, _) in reference.items()}
    if expression is not None:
        for rowid, score in con.execute("SELECT rowid, -bm25(r, 0.0, 1.0) FROM r(?)", (expression,)):
            doc, ordinal = keys[rowid - 1]
            scores[doc][ordinal] = score
    return scores


class _NoOptions:
    options: dict = {}


@pytest.mark.parametrize("question", QUERIES)
def test_a_text_query_passage_weighs_vector_and_words(corpus, model, question):
    """knn_chunk() of a text query: the chunk with the highest similarity + BM25 / (the document's best
    BM25), against the brute-force reference; knn_dist() stays the document's nearest distance, and
    knn_chunks(n) lists the chunks in that order, knn_chunk() first."""
    cur, reference = corpus
    dists = _reference_distances(reference, model, question)
    words = _reference_words(reference, question)
    rows = cur.execute("SELECT id, knn_dist(), knn_chunk(), knn_chunk_text(), knn_chunks(3) FROM docs "
                       "WHERE knn(v, 8, ?)", [question]).fetchall()
    assert len(rows) == 8
    for doc, dist, chunk, text, listed in rows:
        source, spans, _ = reference[doc]
        score = 1.0 - dists[doc] + (words[doc] / words[doc].max() if words[doc].max() > 0 else 0.0)
        assert score[chunk - 1] == pytest.approx(score.max(), abs=1e-5)
        assert dist == pytest.approx(dists[doc].min(), abs=1e-5)
        assert text == source[slice(*spans[chunk - 1])]
        entries = json.loads(listed)
        assert entries[0]["chunk"] == chunk
        assert [score[e["chunk"] - 1] for e in entries] == pytest.approx(np.sort(score)[::-1][:3].tolist(), abs=1e-5)


def test_document_id_query_scores_chunks_against_all_of_its_vectors(corpus):
    cur, reference = corpus
    _, _, query_vectors = reference[7]
    rows = cur.execute("SELECT id, knn_chunk(), knn_chunks(2) FROM docs WHERE knn(v, 5, 7)").fetchall()
    assert 7 not in [r[0] for r in rows]
    for doc, chunk, listed in rows:
        d = (1.0 - reference[doc][2] @ query_vectors.T).min(axis=1)
        assert d[chunk - 1] == pytest.approx(d.min(), abs=1e-6)
        assert [e["dist"] for e in json.loads(listed)] == pytest.approx(np.sort(d)[:2].tolist(), abs=1e-5)


def test_order_by_filters_and_insert_select(corpus):
    cur, reference = corpus
    q = "how do I rotate certificates"
    rows = cur.execute("SELECT id, knn_chunk() AS c FROM docs WHERE knn(v, 10, ?) ORDER BY knn_chunk() DESC, id",
                       [q]).fetchall()
    assert [r[1] for r in rows] == sorted((r[1] for r in rows), reverse=True)
    later = cur.execute("SELECT id FROM docs WHERE knn(v, 10, ?) AND knn_chunk() > 1", [q]).fetchall()
    assert {r[0] for r in later} == {r[0] for r in rows if r[1] > 1}
    cur.execute("CREATE TABLE hits (doc bigint, chunk int, passage text)")
    cur.execute("INSERT INTO hits (doc, chunk, passage) SELECT id, knn_chunk(), knn_chunk_text() FROM docs "
                "WHERE knn(v, 3, ?)", [q])
    stored = cur.execute("SELECT doc, chunk, passage FROM hits ORDER BY id").fetchall()
    assert len(stored) == 3
    for doc, chunk, passage in stored:
        text, spans, _ = reference[doc]
        assert passage == text[slice(*spans[chunk - 1])]
    cur.execute("DROP TABLE hits")


def test_outside_a_knn_query_they_are_an_error(corpus):
    cur, _ = corpus
    for call in ("knn_chunk()", "knn_chunk_text()", "knn_chunk_start()", "knn_chunk_end()", "knn_chunks(2)"):
        with pytest.raises(tesseradb.ProgrammingError, match="only allowed in a query with knn"):
            cur.execute(f"SELECT id, {call} FROM docs")
    with pytest.raises(tesseradb.ProgrammingError, match="positive integer"):
        cur.execute("SELECT knn_chunks(0) FROM docs WHERE knn(v, 2, 'x')")
    with pytest.raises(tesseradb.ProgrammingError, match="takes no arguments"):
        cur.execute("SELECT knn_chunk(3) FROM docs WHERE knn(v, 2, 'x')")


def test_supplied_vectors_have_no_text(cur):
    cur.execute("CREATE TABLE t (title text, v float_vector_array knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')")
    cur.execute("INSERT INTO t (id, title, v) VALUES (1, 'a', [[0, 0], [5, 5], [1, 1]]), (2, 'b', [[9, 9]])")
    rows = cur.execute("SELECT id, knn_chunk(), knn_chunk_text(), knn_chunk_start(), knn_chunk_end(), "
                       "knn_chunks(2) FROM t WHERE knn(v, 2, (1.2, 1.2))").fetchall()
    assert rows[0][:5] == (1, 3, None, None, None)
    assert json.loads(rows[0][5]) == [
        {"chunk": 3, "dist": pytest.approx(0.08), "start": None, "end": None, "text": None, "heading": None},
        {"chunk": 1, "dist": pytest.approx(2.88), "start": None, "end": None, "text": None, "heading": None}]
    assert rows[1][:3] == (2, 1, None)


def test_truncate_reports_the_kept_span_and_mean_the_whole_text(cur, model):
    body = " ".join(f"Paragraph {i} talks about backups, disks and certificates." for i in range(120))
    cur.execute(f"CREATE TABLE d (body text, t float_vector knn_type='hnsw' hnsw_similarity='cosine' "
                f"model_name='{MODEL}' from='body', m float_vector knn_type='hnsw' hnsw_similarity='cosine' "
                f"model_name='{MODEL}' from='body' chunk_strategy='mean')")
    cur.execute("INSERT INTO d (id, body) VALUES (1, ?)", [body])
    offsets = model.token_offsets(body)
    assert len(offsets) > model.window
    start, end, text = cur.execute("SELECT knn_chunk_start(), knn_chunk_end(), knn_chunk_text() FROM d "
                                   "WHERE knn(t, 1, 'backups')").fetchone()
    assert (start, end) == (0, offsets[model.window - 1][1])
    assert text == body[:end]
    assert cur.execute("SELECT knn_chunk(), knn_chunk_start(), knn_chunk_end() FROM d WHERE knn(m, 1, 'backups')"
                       ).fetchone() == (1, 0, len(body))


def test_own_uncommitted_writes_are_reported(corpus):
    cur, _ = corpus
    cur.execute("BEGIN")
    cur.execute("INSERT INTO docs (id, title, body) VALUES (500, 'Zebra', 'Zebras graze on the savannah. 🦓 "
                "They sleep standing up.')")
    row = cur.execute("SELECT id, knn_chunk_text() FROM docs WHERE knn(v, 1, 'zebra on the savannah')").fetchone()
    assert row[0] == 500 and "Zebra" in row[1]
    cur.execute("ROLLBACK")


def test_seed_runbook_sentence_column_finds_the_certificate_passage(cur):
    script = (Path(__file__).resolve().parents[2] / "sql_examples" / "rotate_certificate.sql").read_text("utf-8")
    create = script[script.index("CREATE TABLE"):script.index(";", script.index("CREATE TABLE"))]
    insert = script[script.index("INSERT INTO"):script.index("SHOW WARNINGS")].strip().rstrip(";")
    cur.execute(create)
    cur.execute(insert)
    doc, passage = cur.execute("SELECT id, knn_chunk_text() FROM pages WHERE knn(v_sentence, 4, "
                               "'how do I rotate the TLS certificates used for replication')").fetchone()
    assert doc == 1
    assert passage.startswith("Replication security.")
    assert "To rotate the TLS certificate used for replication" in passage
    assert "Upgrades." not in passage


def test_hybrid_queries_report_the_passage_of_every_fused_row(corpus, model):
    cur, reference = corpus
    q = "how do I rotate certificates"
    dists = _reference_distances(reference, model, q)
    for sql in ["SELECT id, knn_chunk(), knn_chunk_text() FROM docs WHERE MATCH('certificate') AND "
                "knn(v, 5, ?) OPTION fusion_method='rrf'",
                "SELECT id, knn_chunk(), knn_chunk_text() FROM docs WHERE MATCH('certificate') AND knn(v, 5, ?)",
                "SELECT id, knn_chunk(), knn_chunk_text() FROM docs WHERE hybrid_match(?, v)"]:
        rows = cur.execute(sql, [q]).fetchall()
        assert rows, sql
        for doc, chunk, text in rows:
            source, spans, _ = reference[doc]
            assert dists[doc][chunk - 1] == pytest.approx(dists[doc].min(), abs=1e-6), sql
            assert text == source[slice(*spans[chunk - 1])]


def test_full_text_only_query_rejects_them(corpus):
    cur, _ = corpus
    with pytest.raises(tesseradb.ProgrammingError, match="only allowed in a query with knn"):
        cur.execute("SELECT id, knn_chunk_text() FROM docs WHERE MATCH('certificate')")


def test_update_and_delete_reject_them(corpus):
    cur, _ = corpus
    for sql in ["UPDATE docs SET title = 'x' WHERE knn_chunk() = 1", "DELETE FROM docs WHERE knn_chunk_start() > 0"]:
        with pytest.raises(tesseradb.ProgrammingError, match="only allowed in a query with knn"):
            cur.execute(sql)
