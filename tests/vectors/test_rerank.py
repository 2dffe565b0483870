"""OPTION rerank='<dir>' [, rerank_window=N] and rerank_score(): the first N candidates of a knn(),
MATCH() or hybrid query, before LIMIT, reordered by a cross-encoder. The cross-encoder is a tiny
random BERT built in tests/vectors/cross_encoder.py; the expected order comes from its scores computed
independently, straight through onnxruntime."""
from __future__ import annotations

import re

import pytest

import tesseradb
import cross_encoder  # tests/vectors/cross_encoder.py

DOCS = [
    "Send SIGUSR1 to the daemon and it reopens its log files.",
    "The backup job copies the data volume to the standby host every night.",
    "Cats are small furry animals that sleep most of the day.",
    "The replication certificate expires every year; install the new one.",
    "Rotate the logs weekly and keep four old files.",
    "A certificate authority signs the server certificate for the daemon.",
]
QUERY = "how do I renew the daemon certificate"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return cross_encoder.build(tmp_path_factory.mktemp("xenc") / "tiny-cross-encoder", DOCS + [QUERY])


@pytest.fixture
def docs(cur):
    # one chunk per row (max_tokens above every text): each row's best chunk is its whole body
    cur.execute("CREATE TABLE docs (body text, v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
                "model_name='Xenova/all-MiniLM-L6-v2' from='body' chunk_strategy='recursive' max_tokens='64' "
                "overlap_tokens='0')")
    cur.executemany("INSERT INTO docs (id, body) VALUES (?, ?)", list(enumerate(DOCS, start=1)))
    return cur


def expected(model_dir, ids, query=QUERY):
    scores = cross_encoder.scores_by_onnxruntime(model_dir, query, [DOCS[i - 1] for i in ids])
    return sorted(zip(ids, scores), key=lambda p: -p[1])


@pytest.mark.parametrize("where", ["hybrid_match(?)", "knn(v, 3, ?)"])
def test_rerank_orders_the_candidates_by_the_cross_encoders_score_before_limit(docs, model_dir, where):
    want = expected(model_dir, list(range(1, 7)))       # the window (50) holds all six rows
    rows = docs.execute(f"SELECT id, rerank_score() FROM docs WHERE {where} LIMIT 3 OPTION rerank='{model_dir}'",
                        (QUERY,)).fetchall()
    assert [r[0] for r in rows] == [d for d, _ in want[:3]]          # the best three of all, not of knn's three
    assert [r[1] for r in rows] == pytest.approx([s for _, s in want[:3]], abs=1e-4)


def test_rerank_on_match_pairs_its_query_with_the_rows_text(docs, model_dir):
    text = "certificate | daemon | logs"
    rows = docs.execute(f"SELECT id, rerank_score() FROM docs WHERE MATCH('{text}') OPTION rerank='{model_dir}'").fetchall()
    matched = [i for i, d in enumerate(DOCS, start=1) if any(w in d.lower() for w in ("certificate", "daemon", "logs"))]
    want = expected(model_dir, matched, text)
    assert [r[0] for r in rows] == [d for d, _ in want]
    assert [r[1] for r in rows] == pytest.approx([s for _, s in want], abs=1e-4)


def test_rerank_window_reorders_only_the_first_candidates(docs, model_dir):
    plain = [r[0] for r in docs.execute("SELECT id FROM docs WHERE hybrid_match(?)", (QUERY,))]
    rows = docs.execute(f"SELECT id, rerank_score() FROM docs WHERE hybrid_match(?) OPTION rerank='{model_dir}', "
                        "rerank_window=2", (QUERY,)).fetchall()
    want = expected(model_dir, plain[:2])
    assert [r[0] for r in rows[:2]] == [d for d, _ in want]
    assert [r[0] for r in rows[2:]] == plain[2:] and all(r[1] is None for r in rows[2:])


def test_show_models_lists_a_loaded_cross_encoder(docs, model_dir):
    docs.execute(f"SELECT id FROM docs WHERE knn(v, 2, 'cats') OPTION rerank='{model_dir}'").fetchall()
    rows = docs.execute("SHOW MODELS").fetchall()
    assert any(r[0] == str(model_dir.resolve()) and "cross-encoder" in r[3] for r in rows)


def test_errors(docs, model_dir, tmp_path):
    wrong = cross_encoder.build(tmp_path / "two-logits", DOCS, logits=2)
    cases = [
        (f"SELECT id FROM docs WHERE knn(v, 2, 'cats') OPTION rerank='{tmp_path / 'nosuch'}'", "not found"),
        (f"SELECT id FROM docs WHERE knn(v, 2, 'cats') OPTION rerank='{wrong}'", "expected one logit per pair"),
        (f"SELECT id FROM docs WHERE knn(v, 2, 1) OPTION rerank='{model_dir}'", "needs query text"),
        ("SELECT id, rerank_score() FROM docs WHERE knn(v, 2, 'cats')", "only allowed with OPTION rerank"),
        ("SELECT id FROM docs WHERE knn(v, 2, 'cats') OPTION rerank_window=5", "rerank_window needs OPTION rerank"),
        (f"SELECT id FROM docs OPTION rerank='{model_dir}'", "needs a knn(), MATCH() or hybrid_match()"),
    ]
    for sql, message in cases:
        with pytest.raises(tesseradb.Error, match=re.escape(message)) as info:
            docs.execute(sql).fetchall()
        assert "1064" in str(info.value)
