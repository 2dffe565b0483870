"""quantization='rabitq' rabitq_bits='N' through SQL (issue 37): the options, SHOW CREATE TABLE, knn
with Manticore's rescore/oversampling, and the saved index across a restart and a crash."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import tesseradb
from tesseradb.storage.quantized import TRAIN_MIN

N_DOCS = TRAIN_MIN + 500          # enough vectors for the quantizer to be trained
DIMS = 32


def corpus(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, DIMS)).astype(np.float32)
    x = centres[rng.integers(0, 40, N_DOCS)] + 0.5 * rng.standard_normal((N_DOCS, DIMS)).astype(np.float32)
    q = centres[rng.integers(0, 40, 6)] + 0.5 * rng.standard_normal((6, DIMS)).astype(np.float32)
    return x, q


def exact(x: np.ndarray, q: np.ndarray, k: int) -> list[tuple[int, float]]:
    d = ((x.astype(np.float64) - q.astype(np.float64)) ** 2).sum(-1)
    order = np.lexsort((np.arange(len(d)), d))[:k]
    return [(int(i) + 1, float(d[i])) for i in order]


def ddl(options: str) -> str:
    return f"CREATE TABLE t (tag int, v float_vector knn_type='hnsw' knn_dims='{DIMS}' hnsw_similarity='l2' {options})"


def load(con, options: str, x: np.ndarray) -> None:
    con.execute(ddl(options))
    con.executemany("INSERT INTO t (id, tag, v) VALUES (?, ?, ?)", [(i + 1, i % 3, x[i].tolist()) for i in range(len(x))])
    con.commit()


KNN = "SELECT id, knn_dist() FROM t WHERE knn(v, 5, ?)"


@pytest.mark.parametrize("options, kept", [
    ("quantization='rabitq' rabitq_bits='2'", "quantization='rabitq' rabitq_bits='2'"),
    ("quantization='RaBitQ'", "quantization='rabitq' rabitq_bits='4'"),          # 4 bits unless told
    ("quantization='rabitq' rabitq_bits='8'", "quantization='rabitq' rabitq_bits='8'"),
])
def test_show_create_table_writes_the_bits_out(options, kept):
    con = tesseradb.connect(":memory:")
    con.execute(ddl(options))
    assert con.execute("SHOW CREATE TABLE t").fetchone()[1].endswith(kept + "\n)")


@pytest.mark.parametrize("options, message", [
    ("rabitq_bits='2'", "rabitq_bits requires quantization='rabitq'"),
    ("quantization='1bit' rabitq_bits='2'", "rabitq_bits requires quantization='rabitq'"),
    ("quantization='rabitq' rabitq_bits='0'", r"rabitq_bits: '0' is out of range \(1..8\)"),
    ("quantization='rabitq' rabitq_bits='9'", r"rabitq_bits: '9' is out of range \(1..8\)"),
    ("quantization='rabitq' rabitq_bits='two'", 'invalid number "two"'),
    ("quantization='4bit'", "4-bit quantization is no longer supported"),      # Manticore's name and answer
])
def test_bad_rabitq_options_are_refused_and_change_nothing(options, message):
    con = tesseradb.connect(":memory:")
    with pytest.raises(tesseradb.ProgrammingError, match=message) as caught:
        con.execute(ddl(options))
    assert caught.value.errno == 1064
    assert con.execute("SHOW TABLES").fetchall() == []


@pytest.mark.parametrize("bits", ["1", "2", "4"])
def test_rescored_knn_returns_the_exact_neighbours(tmp_path, bits):
    x, queries = corpus(1)
    con = tesseradb.connect(str(tmp_path / "r.db"))
    load(con, f"quantization='rabitq' rabitq_bits='{bits}'", x)
    for q in queries:
        got = con.execute("SELECT id, knn_dist() FROM t WHERE knn(v, 5, ?, {oversampling=50.0})", (q.tolist(),)).fetchall()
        want = exact(x, q, 5)
        assert [r[0] for r in got] == [w[0] for w in want]
        np.testing.assert_allclose([r[1] for r in got], [w[1] for w in want], rtol=1e-5)
    plan = dict(con.execute(f"EXPLAIN {KNN}", (queries[0].tolist(),)).fetchall()[:2])["knn"]
    assert f"quantization=rabitq{bits}" in plan and "trained=True" in plan
    # rescore=0: knn_dist() is the codes' estimate, not the exact distance
    approx = con.execute("SELECT id, knn_dist() FROM t WHERE knn(v, 5, ?, {rescore=0})", (queries[0].tolist(),)).fetchall()
    assert len(approx) == 5 and [r[1] for r in approx] != [w[1] for w in exact(x, queries[0], 5)]
    con.close()


@pytest.mark.parametrize("quantization", ["quantization='1bit'", "quantization='rabitq' rabitq_bits='2'",
                                          "quantization='rabitq' rabitq_bits='4'"])
def test_the_saved_index_is_reused_after_a_restart(tmp_path, saved_indexes, quantization):
    """1bit is the previous release's kind: it still opens as it was saved."""
    path = str(tmp_path / "r.db")
    x, queries = corpus(2)
    con = tesseradb.connect(path)
    load(con, quantization, x)
    before = [con.execute(KNN, (q.tolist(),)).fetchall() for q in queries]
    con.close()
    (name,) = saved_indexes(path).names()
    saved = saved_indexes(path).read(name)
    con = tesseradb.connect(path)
    assert [con.execute(KNN, (q.tolist(),)).fetchall() for q in queries] == before
    index = con.db.column_index(con.db.table("t"), "v").index
    assert index.explain(5)["trained"] is True
    con.close()
    assert saved_indexes(path).read(name) == saved          # loaded, not rebuilt and saved again


CRASH = """
import os, sys, numpy as np, tesseradb
sys.path.insert(0, {here!r})
from test_rabitq_sql import corpus, load
x, _ = corpus(3)
con = tesseradb.connect({path!r})
load(con, "quantization='rabitq' rabitq_bits='2'", x[:{first}])
con.close()                                   # the index is saved inside the file
con = tesseradb.connect({path!r})
con.executemany("INSERT INTO t (id, tag, v) VALUES (?, 0, ?)", [(i + 1, x[i].tolist()) for i in range({first}, len(x))])
con.commit()
con.execute("SELECT id FROM t WHERE knn(v, 1, ?)", (x[0].tolist(),)).fetchall()
con.execute("INSERT INTO t (id, tag, v) VALUES (999999, 0, ?)", (x[1].tolist(),))    # never committed
os._exit(0)                                   # killed: no close, no save of the newer rows
"""


def test_a_crash_loses_nothing_committed_and_the_index_opens(tmp_path):
    path = str(tmp_path / "crash.db")
    x, queries = corpus(3)
    here = str(__import__("pathlib").Path(__file__).parent)
    script = CRASH.format(here=here, path=path, first=N_DOCS - 200)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    con = tesseradb.connect(path)
    assert con.execute("SELECT COUNT(*) FROM t").fetchone()[0] == N_DOCS
    for q in queries:
        got = con.execute("SELECT id, knn_dist() FROM t WHERE knn(v, 5, ?, {oversampling=50.0})", (q.tolist(),)).fetchall()
        assert [r[0] for r in got] == [w[0] for w in exact(x, q, 5)]
    index = con.db.column_index(con.db.table("t"), "v").index        # the saved index, caught up
    assert index.quantization == "rabitq2" and index.explain(5)["trained"] is True and len(index) == N_DOCS
    con.close()
