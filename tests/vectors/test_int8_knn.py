"""knn() through the index's 8-bit first pass (storage/int8_scan.py) returns the rows the float32 scan
of every live chunk returns: ids, order, knn_dist() and knn_score() to the last bit, for k 10 and 50,
LIMIT/OFFSET, after deletes and inserts (the codes are rebuilt), on cosine and ip columns."""
from __future__ import annotations

import numpy as np
import pytest

import tesseradb
from tesseradb.storage import int8_scan

DIMS = 32
QUERIES = [
    "SELECT id, knn_dist() FROM t WHERE knn(v, 10, ?)",
    "SELECT id, knn_dist() FROM t WHERE knn(v, 50, ?)",
    "SELECT id, knn_dist(), knn_score() FROM t WHERE knn(v, ?) LIMIT 5 OFFSET 3",
]


def _rows(rng, first: int, docs: int, centers: np.ndarray) -> list:
    rows = []
    for doc in range(first, first + docs):
        x = centers[doc % len(centers)] + 0.3 * rng.normal(size=(int(rng.integers(1, 10)), DIMS))
        rows.append((doc, x.astype(np.float32).tolist()))
    return rows


def _both(con, monkeypatch, sql: str, q: list) -> tuple[list, list]:
    monkeypatch.setattr(int8_scan, "MIN_CHUNKS", 10**12)
    scanned = con.execute(sql, (q,)).fetchall()
    monkeypatch.setattr(int8_scan, "MIN_CHUNKS", 1)
    first = con.execute(sql, (q,)).fetchall()
    return first, scanned


@pytest.mark.parametrize("metric", ["cosine", "ip"])
def test_knn_rows_equal_the_float32_scans(metric, monkeypatch):
    monkeypatch.setattr(int8_scan, "BUILD_AFTER", 1)
    monkeypatch.setattr(int8_scan, "WORTH_SHARE", 1)        # the pass however many chunks it leaves
    rng = np.random.default_rng(21)
    centers = rng.normal(size=(7, DIMS))
    con = tesseradb.connect()
    con.execute(f"CREATE TABLE t (v float_vector_array knn_type='hnsw' knn_dims='{DIMS}' hnsw_similarity='{metric}')")
    con.executemany("INSERT INTO t (id, v) VALUES (?, ?)", _rows(rng, 1, 300, centers))
    con.commit()
    queries = [(centers[i % 7] + 0.4 * rng.normal(size=DIMS)).astype(np.float32).tolist() for i in range(10)]

    def check() -> None:
        for q in queries:
            for sql in QUERIES:
                first, scanned = _both(con, monkeypatch, sql, q)
                assert first == scanned and first

    check()
    con.execute("DELETE FROM t WHERE id % 9 = 4")
    con.commit()
    check()
    con.executemany("INSERT INTO t (id, v) VALUES (?, ?)", _rows(rng, 1000, 40, centers) + [(2000, [queries[0]])])
    con.commit()
    check()
    if metric == "cosine":                  # the query itself, inserted: the nearest now
        assert con.execute(QUERIES[0], (queries[0],)).fetchall()[0][0] == 2000
