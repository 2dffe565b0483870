"""A large commit reaches the FAISS index a page at a time (issue 37 item 4, the COMMIT after an
INSERT ... SELECT): the chunk rows and vectors are read ``PAGE_ROWS`` at a time, and the index is saved
in parts of ``PART`` bytes holding one in memory. The page and part sizes are lowered here so that a
few hundred rows cross many pages and parts; the index must answer as one read of everything did,
survive a reopen without a rebuild, open when saved in the earlier layout (part 0 as large as the
others), and a save killed half-way must leave every committed row findable."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import numpy as np
import pytest

import tesseradb
from tesseradb.storage import chunks, index_cache

DIMS = 8
ROWS = 700
PAGE = 128
DDL = f"CREATE TABLE t (n int, v float_vector knn_type='hnsw' knn_dims='{DIMS}' hnsw_similarity='l2')"
QUERIES = np.random.default_rng(7).standard_normal((12, DIMS)).astype(np.float32)


def _vectors(n: int, seed: int = 37) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, DIMS)).astype(np.float32)


@pytest.fixture
def pages(monkeypatch):
    """PAGE_ROWS lowered; every read of vectors for the index recorded (its row count)."""
    monkeypatch.setattr(chunks, "PAGE_ROWS", PAGE)
    reads: list[int] = []
    real = chunks.read_vectors

    def read_vectors(*args, **kwargs):
        out = real(*args, **kwargs)
        reads.append(len(out[0]))
        return out
    monkeypatch.setattr(chunks, "read_vectors", read_vectors)
    return reads


def _fill(con, rows: np.ndarray, first: int = 1) -> None:
    con.executemany("INSERT INTO t (id, n, v) VALUES (?, ?, ?)",
                    [(first + i, first + i, x.tolist()) for i, x in enumerate(rows)])


def _knn(con, k: int = 10) -> list[list[tuple[int, float]]]:
    return [[(doc, round(dist, 4)) for doc, dist in
             con.execute(f"SELECT id, knn_dist() FROM t WHERE knn(v, {k}, ?)", (q.tolist(),))] for q in QUERIES]


def _brute_force(rows: np.ndarray, k: int = 10) -> list[list[int]]:
    d = ((QUERIES[:, None, :] - rows[None, :, :]) ** 2).sum(-1)
    return [list(np.argsort(row, kind="stable")[:k] + 1) for row in d]


def _one_shot(tmp_path, rows: np.ndarray) -> list:
    """The answers of an index built by one read of every row (a page larger than the table)."""
    saved = chunks.PAGE_ROWS
    chunks.PAGE_ROWS = 10**9
    try:
        con = tesseradb.connect(str(tmp_path / "one_shot.db"))
        con.execute(DDL)
        _fill(con, rows)
        con.commit()
        return _knn(con)
    finally:
        chunks.PAGE_ROWS = saved
        con.close()


def _index(con):
    return con.db.column_index(con.db.table("t"), "v")


def test_a_commit_building_the_index_reads_pages_and_answers_as_one_read(tmp_path, pages, path):
    rows = _vectors(ROWS)
    con = tesseradb.connect(str(tmp_path / "paged.db"))
    con.execute(DDL)
    _fill(con, rows[:50])
    con.commit()
    con.execute("CREATE TABLE staging (n int, v float_vector knn_type='hnsw' knn_dims='8' hnsw_similarity='l2')")
    con.executemany("INSERT INTO staging (n, v) VALUES (?, ?)", [(51 + i, x.tolist()) for i, x in enumerate(rows[50:])])
    con.commit()
    con.close()
    con = tesseradb.connect(str(tmp_path / "paged.db"))      # the index of t is not loaded here
    pages.clear()
    con.execute("INSERT INTO t (id, n, v) SELECT n, n, v FROM staging")
    con.commit()                                              # builds it: the saved one plus 650 rows
    assert pages and max(pages) <= PAGE and sum(pages) >= ROWS - 50 and len(pages) >= (ROWS - 50) // PAGE
    got = _knn(con)
    assert got == _one_shot(tmp_path, rows)
    assert [[doc for doc, _ in hits] for hits in got] == _brute_force(rows)
    assert len(_index(con).index) == ROWS
    con.close()


def test_a_large_commit_into_a_loaded_index_is_added_in_pages(tmp_path, pages, path):
    rows = _vectors(ROWS)
    con = tesseradb.connect(str(tmp_path / "loaded.db"))
    con.execute(DDL)
    _fill(con, rows[:40])
    con.commit()
    _knn(con)                                                 # the index is loaded in this connection
    pages.clear()
    _fill(con, rows[40:], first=41)
    con.commit()
    assert max(pages) <= PAGE and sum(pages) == ROWS - 40 and len(pages) >= (ROWS - 40) // PAGE
    assert _knn(con) == _one_shot(tmp_path, rows)
    con.close()


def test_a_rebuild_from_the_table_reads_pages(tmp_path, pages):
    rows = _vectors(ROWS)
    con = tesseradb.connect(str(tmp_path / "rebuilt.db"))
    con.execute(DDL)
    _fill(con, rows)
    con.execute("DELETE FROM t WHERE id % 5 = 0")
    con.commit()
    pages.clear()
    _index(con).rebuild()
    assert max(pages) <= PAGE and sum(pages) == ROWS - ROWS // 5 and len(pages) >= 4
    kept = np.flatnonzero((np.arange(1, ROWS + 1) % 5) != 0)
    expected = [[int(kept[j]) + 1 for j in hits] for hits in
                (np.array(h) - 1 for h in _brute_force(rows[kept]))]
    assert [[doc for doc, _ in hits] for hits in _knn(con)] == expected
    con.close()


@pytest.fixture
def small_parts(monkeypatch):
    monkeypatch.setattr(index_cache, "PART", 4096)


def _parts(con) -> list[int]:
    name = _index(con).name
    return [r[0] for r in con.db.store.execute(f"SELECT length(data) FROM {index_cache.TABLE} WHERE name = ? AND part >= 0 "
                                      "ORDER BY part", (name,))]


def test_a_large_commit_saved_in_many_parts_survives_a_reopen(tmp_path, pages, small_parts):
    rows = _vectors(ROWS)
    db = str(tmp_path / "reopen.db")
    con = tesseradb.connect(db)
    con.execute(DDL)
    _fill(con, rows)
    con.commit()                                   # built in pages, saved (the first save) in parts
    answers = _knn(con)
    parts = _parts(con)
    con.close()
    assert len(parts) > 10 and max(parts) <= 4096
    con = tesseradb.connect(db)
    pages.clear()
    assert _knn(con) == answers
    idx = _index(con)
    assert pages == [] and idx.problem is None and idx.has_saved and len(idx.index) == ROWS   # loaded, not rebuilt
    con.close()


def test_an_index_saved_with_the_earlier_part_layout_opens(tmp_path, monkeypatch):
    """Before, part 0 was as large as the others (16 MB) and stayed in memory to the end of a save."""
    rows = _vectors(300)
    db = str(tmp_path / "earlier.db")
    monkeypatch.setattr(index_cache, "PART", 8192)
    monkeypatch.setattr(index_cache, "FIRST", 8192)
    con = tesseradb.connect(db)
    con.execute(DDL)
    _fill(con, rows)
    con.commit()
    answers = _knn(con)
    parts = _parts(con)
    con.close()
    assert parts[0] == 8192 and len(parts) > 2
    monkeypatch.undo()
    con = tesseradb.connect(db)
    assert _knn(con) == answers
    idx = _index(con)
    assert idx.problem is None and idx.has_saved and len(idx.index) == 300
    con.close()


_KILLED_SAVE = """
import os, signal, sys
import tesseradb
from tesseradb.storage import chunks, index_cache
chunks.PAGE_ROWS, index_cache.PART = 128, 4096
real = index_cache.CacheWriter._insert

def insert(self, part, data):
    real(self, part, data)
    if self.written == 5:                      # five parts of the new generation are stored
        os.kill(os.getpid(), signal.SIGKILL)
index_cache.CacheWriter._insert = insert
con = tesseradb.connect(sys.argv[1])
con.execute("SELECT id FROM t WHERE knn(v, 1, (0, 0, 0, 0, 0, 0, 0, 0))").fetchall()     # load the saved index
con.execute("INSERT INTO t (n, v) SELECT n + 1000, v FROM t")
con.commit()
print("committed", flush=True)
con.close()                                    # saves the index, and is killed half-way
"""


@pytest.mark.slow
def test_a_save_killed_half_way_keeps_every_committed_row(tmp_path, small_parts):
    rows = _vectors(400)
    db = str(tmp_path / "killed.db")
    con = tesseradb.connect(db)
    con.execute(DDL)
    _fill(con, rows)
    con.commit()
    con.close()                                    # generation 1: 400 vectors
    child = subprocess.run([sys.executable, "-c", _KILLED_SAVE, db], capture_output=True, text=True, timeout=300)
    assert child.returncode == -signal.SIGKILL and child.stdout.strip() == "committed", child.stderr[-2000:]
    con = tesseradb.connect(db)
    assert con.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 800
    idx = _index(con)
    saved = idx.read_saved()
    assert saved is not None and len(saved[0]) == 400             # the last whole save, not a torn one
    name = idx.name
    unfinished = con.db.store.one(f"SELECT COUNT(*) FROM {index_cache.TABLE} WHERE name = ? AND gen > "
                             f"(SELECT gen FROM {index_cache.HEAD} WHERE name = ?)", (name, name))[0]
    assert unfinished >= 5
    doubled = np.concatenate([rows, rows])
    found = con.execute("SELECT id FROM t WHERE knn(v, 900, (0, 0, 0, 0, 0, 0, 0, 0))").fetchall()
    assert sorted(r[0] for r in found) == sorted(r[0] for r in con.execute("SELECT id FROM t"))
    for i in (0, 133, 399):                       # a vector and its copy, both found at distance 0
        hits = con.execute("SELECT id, knn_dist() FROM t WHERE knn(v, 2, ?)", (doubled[i].tolist(),)).fetchall()
        assert [d for _, d in hits] == [0.0, 0.0] and i + 1 in [doc for doc, _ in hits]
    assert idx.problem is None
    con.close()                                    # saves the caught-up index, and removes the leftovers
    con = tesseradb.connect(db)
    idx = _index(con)
    assert len(idx.read_saved()[0]) == 800
    assert con.db.store.one(f"SELECT COUNT(*) FROM {index_cache.TABLE} WHERE name = ? AND gen <> "
                            f"(SELECT gen FROM {index_cache.HEAD} WHERE name = ?)", (idx.name, idx.name))[0] == 0
    con.close()


@pytest.mark.parametrize("quantization", ["8bit", "rabitq' rabitq_bits='2"])
def test_a_quantized_index_built_in_pages_trains_on_vectors_spread_over_all(tmp_path, pages, quantization):
    """Rows that drift (the later ones up to 4x larger): trained on the first page alone, the 8-bit
    ranges would clip most later vectors; trained on a spread, they hold most of them."""
    rows = _vectors(ROWS) * np.linspace(1, 4, ROWS, dtype=np.float32)[:, None]
    con = tesseradb.connect(str(tmp_path / "quantized.db"))
    con.execute(DDL.replace("hnsw_similarity='l2'", f"hnsw_similarity='l2' quantization='{quantization}'"))
    _fill(con, rows)
    con.commit()
    assert max(pages) <= PAGE and len(pages) >= ROWS // PAGE
    index = _index(con).index
    assert not index.untrained and len(index) == ROWS and len(index._staged) == 0
    if quantization == "8bit":
        from tesseradb.storage.quantized import faiss
        trained = faiss.vector_to_array(faiss.downcast_index(index._index.storage).sq.trained).reshape(2, DIMS)
        low, high = trained[0], trained[0] + trained[1]
        inside = ((rows >= low) & (rows <= high)).all(1).mean()    # rows no dimension of which is clipped
        assert inside >= 0.7, inside                               # the first page's ranges hold 38% of them
    for i in (0, 350, 699):          # rescored from the exact vectors: each row finds itself first
        hits = con.execute("SELECT id, knn_dist() FROM t WHERE knn(v, 3, ?)", (rows[i].tolist(),)).fetchall()
        assert hits[0] == (i + 1, 0.0)
    con.close()
