"""CALL EVALUATE('<SELECT ... ?>', '<questions table>'): recall@1/5/10, MRR and nDCG@10, overall and per
question, computed from the query's own rows (checked against a hand count)."""
from __future__ import annotations

import math

import pytest

import tesseradb


@pytest.fixture
def kb(cur):
    cur.execute("CREATE TABLE kb (title text, v float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')")
    cur.execute("INSERT INTO kb (id, title, v) VALUES (1, 'red apple', (0,0)), (2, 'green apple', (1,0)), "
                "(3, 'red car', (2,0)), (4, 'blue car', (3,0))")
    cur.execute("CREATE TABLE q (question string, answer_id int)")
    cur.execute("INSERT INTO q (question, answer_id) VALUES ('red', 1), ('car', 4), ('green', 2), ('banana', 1)")
    return cur


def test_scores_overall_and_per_question(kb):
    rows = kb.execute("CALL EVALUATE('SELECT id FROM kb WHERE MATCH(?) ORDER BY id', 'q')").fetchall()
    names = [d[0] for d in kb.description]
    assert names == ["question", "answer_id", "rank", "recall@1", "recall@5", "recall@10", "mrr", "ndcg@10"]
    # red -> 1, 3 (rank 1); car -> 3, 4 (rank 2); green -> 2 (rank 1); banana -> nothing
    assert rows[1:] == [("red", 1, 1, 1, 1, 1, 1.0, 1.0), ("car", 4, 2, 0, 1, 1, 0.5, pytest.approx(1 / math.log2(3))),
                        ("green", 2, 1, 1, 1, 1, 1.0, 1.0), ("banana", 1, None, 0, 0, 0, 0.0, 0.0)]
    assert rows[0][:3] == ("(all 4)", None, None)
    assert rows[0][3:] == pytest.approx((0.5, 0.75, 0.75, 2.5 / 4, (2 + 1 / math.log2(3)) / 4), abs=1e-6)


def test_compares_strategies_on_the_same_questions(kb):
    text = kb.execute("CALL EVALUATE('SELECT id FROM kb WHERE MATCH(?)', 'q')").fetchall()[0]
    fused = kb.execute("CALL EVALUATE('SELECT id FROM kb WHERE MATCH(?) AND knn(v, 4, (3,0)) "
                       "OPTION fusion_method=''rrf''', 'q')").fetchall()[0]
    assert text[5] == 0.75 and fused[5] == 1.0     # the knn side holds all four documents: banana finds 1 too


@pytest.mark.parametrize("sql, message", [
    ("CALL EVALUATE('SELECT id FROM kb WHERE MATCH(?)', 'nosuch')", "table 'nosuch' does not exist"),
    ("CALL EVALUATE('SELECT id FROM kb WHERE MATCH(?)', 'kb')", "needs the columns question and answer_id"),
    ("CALL EVALUATE('SELECT id FROM kb', 'q')", "exactly one ?"),
    ("CALL EVALUATE('DELETE FROM kb WHERE id = ?', 'q')", "must be a SELECT"),
    ("CALL EVALUATE('SELECT id FROM kb WHERE MATCH(?)')", "CALL EVALUATE expects"),
])
def test_errors(kb, sql, message):
    with pytest.raises(tesseradb.Error, match=message.replace("?", r"\?").replace("(", r"\(")):
        kb.execute(sql).fetchall()
    assert kb.execute("SELECT COUNT(*) FROM kb").fetchone() == (4,)
