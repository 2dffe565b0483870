"""quantization='8bit' / '1bit' on knn columns through SQL: rescoring from the stored float32 vectors,
the rescore and oversampling options, transactions, and the index file across reopen."""
from __future__ import annotations


import numpy as np
import pytest

import tesseradb
from tesseradb.storage.quantized import TRAIN_MIN

N_DOCS = TRAIN_MIN + 500          # enough vectors for the quantizer to be trained
DIMS = 24


def corpus(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two vectors per document (float_vector_array), clustered; and some queries."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, DIMS)).astype(np.float32)
    x = centres[rng.integers(0, 40, (N_DOCS, 2))] + 0.5 * rng.standard_normal((N_DOCS, 2, DIMS)).astype(np.float32)
    q = centres[rng.integers(0, 40, 8)] + 0.5 * rng.standard_normal((8, DIMS)).astype(np.float32)
    return x, q


def exact(x: np.ndarray, q: np.ndarray, k: int, metric: str) -> list[tuple[int, float]]:
    """(doc id, distance of its closest vector) of the k nearest documents, float64 brute force."""
    x64, q64 = x.astype(np.float64), q.astype(np.float64)
    if metric == "cosine":
        x64 = x64 / np.linalg.norm(x64, axis=-1, keepdims=True)
        q64 = q64 / np.linalg.norm(q64)
    d = ((x64 - q64) ** 2).sum(-1) if metric == "l2" else 1.0 - (x64 * q64).sum(-1)
    best = d.min(axis=1)
    order = np.lexsort((np.arange(len(best)), best))[:k]
    return [(int(i) + 1, float(best[i])) for i in order]


def load(con, quantization: str, metric: str = "l2", x: np.ndarray | None = None) -> None:
    con.execute(f"CREATE TABLE t (tag int, v float_vector_array knn_type='hnsw' knn_dims='{DIMS}' "
                f"hnsw_similarity='{metric}' quantization='{quantization}')")
    con.executemany("INSERT INTO t (id, tag, v) VALUES (?, ?, ?)",
                    [(i + 1, i % 3, x[i].tolist()) for i in range(len(x))])
    con.commit()


@pytest.fixture
def con(tmp_path):
    c = tesseradb.connect(str(tmp_path / "q.db"))
    yield c
    c.close()


@pytest.mark.parametrize("quantization", ["8bit", "1bit"])
@pytest.mark.parametrize("metric", ["l2", "cosine", "ip"])
def test_rescored_knn_returns_exact_distances(con, quantization, metric):
    x, queries = corpus()
    load(con, quantization, metric, x)
    for q in queries:
        got = con.execute("SELECT id, knn_dist() FROM t WHERE knn(v, 5, ?, {oversampling=1000.0})",
                          (q.tolist(),)).fetchall()
        want = exact(x, q, 5, metric)
        assert [r[0] for r in got] == [w[0] for w in want]
        np.testing.assert_allclose([r[1] for r in got], [w[1] for w in want], rtol=1e-6, atol=1e-6)


def test_8bit_default_options_find_the_exact_neighbours(con):
    x, queries = corpus(1)
    load(con, "8bit", "l2", x)
    hits = 0
    for q in queries:
        got = {r[0] for r in con.execute("SELECT id FROM t WHERE knn(v, 10, ?)", (q.tolist(),))}
        hits += len(got & {w[0] for w in exact(x, q, 10, "l2")})
    assert hits / (10 * len(queries)) >= 0.95


def test_rescore_0_reports_the_distances_of_the_codes(con):
    x, queries = corpus(2)
    load(con, "8bit", "l2", x)
    q = queries[0].tolist()
    rescored = dict(con.execute("SELECT id, knn_dist() FROM t WHERE knn(v, 5, ?)", (q,)).fetchall())
    approx = dict(con.execute("SELECT id, knn_dist() FROM t WHERE knn(v, 5, ?, {rescore=0})", (q,)).fetchall())
    shared = set(rescored) & set(approx)
    assert shared and all(approx[d] != rescored[d] for d in shared)
    assert all(approx[d] == pytest.approx(rescored[d], rel=0.05) for d in shared)


def test_explain_shows_quantization_and_the_options(con):
    x, queries = corpus(3)
    load(con, "1bit", "cosine", x)
    plan = " ".join(r[1] for r in con.execute(
        "EXPLAIN SELECT id FROM t WHERE knn(v, 4, ?, {rescore=0, oversampling=5.0})", (queries[0].tolist(),)))
    assert "quantization=1bit" in plan and "rescore=0" in plan and "oversampling=5.0" in plan
    assert "shortlist_docs=20" in plan


def test_filters_and_open_transactions_work_on_quantized_columns(con):
    x, queries = corpus(4)
    load(con, "8bit", "l2", x)
    q = queries[0]
    con.execute("BEGIN")
    con.execute("INSERT INTO t (id, tag, v) VALUES (?, 1, ?)", (99_999, [q.tolist()]))
    got = con.execute("SELECT id, knn_dist() FROM t WHERE knn(v, 3, ?) AND tag = 1", (q.tolist(),)).fetchall()
    assert got[0] == (99_999, 0.0) and all((i - 1) % 3 == 1 for i, _ in got[1:])
    con.rollback()
    assert 99_999 not in {r[0] for r in con.execute("SELECT id FROM t WHERE knn(v, 3, ?)", (q.tolist(),))}


def test_the_saved_quantized_index_is_reused_after_reopen(tmp_path, saved_indexes):
    path = str(tmp_path / "q.db")
    x, queries = corpus(5)
    con = tesseradb.connect(path)
    load(con, "8bit", "cosine", x)
    sql = "SELECT id, knn_dist() FROM t WHERE knn(v, 5, ?)"
    before = [con.execute(sql, (q.tolist(),)).fetchall() for q in queries]
    con.close()
    (name,) = saved_indexes(path).names()
    saved = saved_indexes(path).read(name)
    con = tesseradb.connect(path)
    assert [con.execute(sql, (q.tolist(),)).fetchall() for q in queries] == before
    index = con.db.column_index(con.db.table("t"), "v").index
    assert index.quantization == "8bit" and index.explain(5)["trained"] is True
    con.close()
    assert saved_indexes(path).read(name) == saved          # loaded, not rebuilt and saved again


def test_optimize_retrains_a_quantized_index(con):
    x, queries = corpus(6)
    load(con, "8bit", "l2", x)
    con.execute("DELETE FROM t WHERE id <= 600")
    con.commit()
    con.execute("OPTIMIZE TABLE t")
    index = con.db.column_index(con.db.table("t"), "v").index
    assert index.tombstones == 0 and index.quantization == "8bit"
    q = queries[0]
    got = [r[0] for r in con.execute("SELECT id FROM t WHERE knn(v, 5, ?, {oversampling=1000.0})", (q.tolist(),))]
    assert got == [w[0] + 600 for w in exact(x[600:], q, 5, "l2")]
