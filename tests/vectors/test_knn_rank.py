"""knn() options {mmr=λ[, mmr_candidates=N]} and {length_penalty=α}, and knn_score(). Expected values
are worked out by hand from the vectors (docstrings of tesseradb.vectors.mmr and knn_rank)."""
from __future__ import annotations

import math

import pytest

import tesseradb

# unit vectors at angles 0, 8, 11.5, 45 and 90 degrees: 1, 2, 3 nearly copies of each other
POINTS = {1: (1.0, 0.0), 2: (0.99, 0.14), 3: (0.98, 0.2), 4: (0.7071, 0.7071), 5: (0.0, 1.0)}


@pytest.fixture
def p(cur):
    cur.execute("CREATE TABLE p (v float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='cosine')")
    cur.executemany("INSERT INTO p (id, v) VALUES (?, ?)", [(i, list(v)) for i, v in POINTS.items()])
    return cur


def _unit(v):
    n = math.hypot(*v)
    return (v[0] / n, v[1] / n)


def _cos(a, b):
    a, b = _unit(a), _unit(b)
    return a[0] * b[0] + a[1] * b[1]


def test_without_options_knn_score_is_the_similarity_and_the_order_the_distance(p):
    rows = p.execute("SELECT id, knn_dist(), knn_score() FROM p WHERE knn(v, 3, (1,0))").fetchall()
    assert [r[0] for r in rows] == [1, 2, 3]
    assert [r[2] for r in rows] == pytest.approx([1 - d for _, d, _ in rows])


def test_mmr_trades_relevance_for_diversity(p):
    # relevance = cos to (1,0); diversity 0.7: pick 1 (0.3); then 5 scores 0.3*0 - 0.7*0 = 0, above 4
    # (0.3*0.707 - 0.7*0.707) and the near-copies 2 and 3 (about -0.4); then 4, its largest cosine 0.707
    rows = p.execute("SELECT id, knn_dist(), knn_score() FROM p WHERE knn(v, 3, (1,0), {mmr=0.7})").fetchall()
    assert [r[0] for r in rows] == [1, 5, 4]
    c4 = _cos(POINTS[4], (1, 0))
    assert [r[2] for r in rows] == pytest.approx([0.3, 0.0, 0.3 * c4 - 0.7 * max(c4, _cos(POINTS[4], POINTS[5]))],
                                                 abs=1e-4)
    assert rows[1][1] == pytest.approx(1.0, abs=1e-6)          # knn_dist() stays the raw distance
    plain = p.execute("SELECT id FROM p WHERE knn(v, 3, (1,0), {mmr=0})").fetchall()
    assert [r[0] for r in plain] == [1, 2, 3]                   # diversity 0: relevance alone


def test_mmr_candidates_limits_what_it_chooses_from(p):
    rows = p.execute("SELECT id FROM p WHERE knn(v, 3, (1,0), {mmr=0.7, mmr_candidates=3})").fetchall()
    assert sorted(r[0] for r in rows) == [1, 2, 3]              # only the three nearest to choose from


def test_length_penalty_divides_the_similarity_by_the_chunk_count(cur):
    cur.execute("CREATE TABLE a (v float_vector_array knn_type='hnsw' knn_dims='2' hnsw_similarity='cosine')")
    # document 1: eight chunks, its best right on the query; document 2: two chunks a little off it
    cur.execute("INSERT INTO a (id, v) VALUES (1, ((1,0),(0,1),(0,1),(0,1),(0,1),(0,1),(0,1),(0,1))), "
                "(2, ((0.95,0.31),(0.95,0.31)))")
    rows = cur.execute("SELECT id, knn_score() FROM a WHERE knn(v, 2, (1,0))").fetchall()
    assert [r[0] for r in rows] == [1, 2]
    rows = cur.execute("SELECT id, knn_dist(), knn_score() FROM a WHERE knn(v, 2, (1,0), {length_penalty=0.25})").fetchall()
    s2 = _cos((0.95, 0.31), (1, 0)) / (1 + 0.25 * math.log(2))
    assert [r[0] for r in rows] == [2, 1]
    assert [r[2] for r in rows] == pytest.approx([s2, 1.0 / (1 + 0.25 * math.log(8))], abs=1e-5)
    assert rows[1][1] == pytest.approx(0.0, abs=1e-6)
    # a document-id query ignores it: which documents resemble document 2 as a whole
    by_id = cur.execute("SELECT id FROM a WHERE knn(v, 1, 2, {length_penalty=5})").fetchall()
    assert by_id == [(1,)]


@pytest.mark.parametrize("option", ["mmr=1.5", "mmr=-0.1", "mmr='a'", "mmr_candidates=0", "length_penalty=-1"])
def test_bad_values_are_manticores_knn_option_error(p, option):
    with pytest.raises(tesseradb.Error, match=r"1064.*Unable to parse KNN option"):
        p.execute(f"SELECT id FROM p WHERE knn(v, 3, (1,0), {{{option}}})").fetchall()


def test_knn_score_outside_a_knn_query_is_an_error(p):
    with pytest.raises(tesseradb.Error, match=r"1064.*knn_score\(\) is only allowed for KNN\(\) queries"):
        p.execute("SELECT knn_score() FROM p").fetchall()


def test_knn_chunks_with_mmr_skips_near_copies_of_a_passage(cur):
    import json
    cur.execute("CREATE TABLE a (v float_vector_array knn_type='hnsw' knn_dims='2' hnsw_similarity='cosine')")
    cur.execute("INSERT INTO a (id, v) VALUES (1, ((1,0),(0.99,0.14),(0.98,0.2),(0,1)))")
    plain = json.loads(cur.execute("SELECT knn_chunks(3) FROM a WHERE knn(v, 1, (1,0))").fetchone()[0])
    assert [p["chunk"] for p in plain] == [1, 2, 3]                  # three near-copies
    diverse = json.loads(cur.execute("SELECT knn_chunks(3, {mmr=0.7}) FROM a WHERE knn(v, 1, (1,0))").fetchone()[0])
    assert [p["chunk"] for p in diverse] == [1, 4, 3]                # the orthogonal passage comes second
    assert diverse[1]["dist"] == pytest.approx(1.0, abs=1e-6)
    with pytest.raises(tesseradb.Error, match=r"1064.*expects λ, a number in \[0, 1\]"):
        cur.execute("SELECT knn_chunks(3, {mmr=2}) FROM a WHERE knn(v, 1, (1,0))").fetchall()
