"""Issue 28: a closed database is exactly one file (the vector indexes are saved inside it), release
0.2's `<db>.tessera/` folder is migrated on open, and BACKUP TO makes a consistent copy that opens
without rebuilding anything."""
from __future__ import annotations

import logging
import os
import threading

import numpy as np
import pytest

import tesseradb
from tesseradb.storage import index_cache
from tesseradb.storage.vectors import VectorIndex

DDL = ("CREATE TABLE t (v float_vector knn_type='hnsw' knn_dims='4' hnsw_similarity='l2')")


def _fill(con, n: int, start: int = 1) -> None:
    rng = np.random.default_rng(start)
    con.executemany("INSERT INTO t (id, v) VALUES (?, ?)",
                    [(i, [float(x) for x in rng.random(4)]) for i in range(start, start + n)])
    con.commit()


def _nearest(con, vec: str = "(0.5,0.5,0.5,0.5)") -> list[int]:
    return [r[0] for r in con.execute(f"SELECT id FROM t WHERE knn(v, 5, {vec})").fetchall()]


def _files(folder) -> list[str]:
    return sorted(os.listdir(folder))


def test_a_closed_database_is_one_file(tmp_path):
    path = str(tmp_path / "x.db")
    con = tesseradb.connect(path)
    con.execute(DDL)
    _fill(con, 300)
    before = _nearest(con)
    con.close()
    assert _files(tmp_path) == ["x.db"]
    con = tesseradb.connect(path)
    assert _nearest(con) == before
    con.close()


def test_the_index_is_saved_inside_and_loaded_without_a_rebuild(tmp_path, caplog):
    path = str(tmp_path / "x.db")
    con = tesseradb.connect(path)
    con.execute(DDL)
    _fill(con, 200)
    _nearest(con)
    con.close()
    con = tesseradb.connect(path)
    store = con.db.store
    assert index_cache.names(store) != []
    with caplog.at_level(logging.INFO, logger="tesseradb.storage"):
        _nearest(con)
    idx = next(iter(con.db.indexes.values()))
    assert idx.has_saved and len(idx.index) == 200
    assert not [r for r in caplog.records if "rebuild" in r.getMessage()]
    con.close()


def test_a_damaged_saved_index_is_rebuilt_with_a_warning(tmp_path, caplog):
    path = str(tmp_path / "x.db")
    con = tesseradb.connect(path)
    con.execute(DDL)
    _fill(con, 100)
    before = _nearest(con)
    con.close()
    con = tesseradb.connect(path)
    con.db.store.execute(f"UPDATE {index_cache.TABLE} SET data = zeroblob(length(data)) WHERE part = 0")
    with caplog.at_level(logging.WARNING, logger="tesseradb.storage"):
        assert _nearest(con) == before
    assert any("unusable" in r.getMessage() for r in caplog.records)
    report = con.execute("CHECK TABLE t").fetchall()
    assert any("saved index is unusable" in str(row) for row in report)
    con.close()


def test_a_saved_index_of_another_shape_is_not_used(tmp_path):
    path = str(tmp_path / "x.db")
    con = tesseradb.connect(path)
    con.execute(DDL)
    _fill(con, 50)
    before = _nearest(con)
    name = next(iter(con.db.indexes.values())).name
    con.close()
    con = tesseradb.connect(path)
    other = VectorIndex(8, "l2")
    other.add(np.arange(1, 4), np.arange(1, 4), np.ones((3, 8), np.float32))
    index_cache.write(con.db.store, name, lambda stream: other.save(stream, "3:3"))
    assert _nearest(con) == before
    con.close()


def test_a_release_0_2_side_folder_is_migrated_on_open(tmp_path):
    path = str(tmp_path / "x.db")
    con = tesseradb.connect(path)
    con.execute(DDL)
    _fill(con, 120)
    before = _nearest(con)
    idx = next(iter(con.db.indexes.values()))
    folder = path + ".tessera"
    os.mkdir(folder)
    idx.index.save(os.path.join(folder, f"{idx.name}.faiss"), f"{idx.max_id}:{len(idx.index)}")
    index_cache.remove(con.db.store, idx.name)          # as a 0.2 database: nothing saved inside
    con.close()
    assert os.path.isfile(os.path.join(folder, f"{idx.name}.faiss"))
    con = tesseradb.connect(path)
    assert _nearest(con) == before
    con.close()
    assert _files(tmp_path) == ["x.db"]               # saved inside, the folder gone
    con = tesseradb.connect(path)
    assert index_cache.names(con.db.store) == [idx.name]
    con.close()


def test_an_index_larger_than_one_part_round_trips(tmp_path, monkeypatch):
    monkeypatch.setattr(index_cache, "PART", 4096)      # many parts from a small index
    path = str(tmp_path / "x.db")
    con = tesseradb.connect(path)
    con.execute(DDL)
    _fill(con, 400)
    before = _nearest(con)
    con.close()
    con = tesseradb.connect(path)
    parts = con.db.store.one(f"SELECT COUNT(*) FROM {index_cache.TABLE}")[0]
    assert parts > 5
    assert _nearest(con) == before
    assert next(iter(con.db.indexes.values())).has_saved
    con.close()


def test_a_rolled_back_drop_keeps_the_saved_index(tmp_path):
    path = str(tmp_path / "x.db")
    con = tesseradb.connect(path)
    con.execute(DDL)
    _fill(con, 60)
    _nearest(con)
    con.close()
    con = tesseradb.connect(path)
    con.execute("BEGIN")
    con.execute("DROP TABLE t")
    con.rollback()
    assert len(index_cache.names(con.db.store)) == 1
    con.close()


def test_drop_table_forgets_the_saved_index(tmp_path):
    path = str(tmp_path / "x.db")
    con = tesseradb.connect(path, autocommit=True)
    con.execute(DDL)
    _fill(con, 60)
    _nearest(con)
    con.db.save_indexes()
    assert index_cache.names(con.db.store)
    con.execute("DROP TABLE t")
    assert index_cache.names(con.db.store) == []
    con.close()


# -- BACKUP TO ------------------------------------------------------------------------------------
def test_backup_makes_a_copy_that_opens_without_a_rebuild(tmp_path):
    path, copy = str(tmp_path / "x.db"), str(tmp_path / "copy.db")
    con = tesseradb.connect(path)
    con.execute(DDL)
    _fill(con, 250)
    before = _nearest(con)
    con.execute(f"BACKUP TO '{copy}'")
    con.close()
    assert os.path.isfile(copy) and not os.path.exists(copy + "-wal")
    other = tesseradb.connect(copy)
    idx_name = index_cache.names(other.db.store)
    assert len(idx_name) == 1
    assert _nearest(other) == before
    assert next(iter(other.db.indexes.values())).has_saved      # loaded, not rebuilt
    assert other.execute("SELECT COUNT(*) FROM t").fetchone() == (250,)
    other.close()


def test_backup_of_an_in_memory_database(tmp_path):
    copy = str(tmp_path / "copy.db")
    con = tesseradb.connect(":memory:")
    con.execute(DDL)
    _fill(con, 40)
    before = _nearest(con)
    con.execute(f"BACKUP TO '{copy}'")
    other = tesseradb.connect(copy)
    assert _nearest(other) == before
    other.close()


def test_backup_never_overwrites_and_refuses_inside_a_transaction(tmp_path):
    path, copy = str(tmp_path / "x.db"), str(tmp_path / "copy.db")
    con = tesseradb.connect(path)
    con.execute(DDL)
    _fill(con, 10)
    open(copy, "w").write("precious")
    with pytest.raises(tesseradb.OperationalError) as err:
        con.execute(f"BACKUP TO '{copy}'")
    assert err.value.errno == 1086 and "already exists" in str(err.value)
    assert open(copy).read() == "precious"
    con.execute("INSERT INTO t (id, v) VALUES (999, (1,1,1,1))")
    with pytest.raises(tesseradb.OperationalError) as err:
        con.execute(f"BACKUP TO '{tmp_path / 'other.db'}'")
    assert err.value.errno == 1192
    assert not os.path.exists(tmp_path / "other.db")
    with pytest.raises(tesseradb.OperationalError):
        con.execute(f"BACKUP TO '{tmp_path / 'missing' / 'x.db'}'")
    con.close()


def test_backup_is_consistent_while_another_connection_writes(tmp_path):
    path, copy = str(tmp_path / "x.db"), str(tmp_path / "copy.db")
    con = tesseradb.connect(path)
    con.execute(DDL)
    _fill(con, 500)
    stop = threading.Event()

    def writer():
        w = tesseradb.connect(path, autocommit=True)
        n = 10_000
        while not stop.is_set():
            w.execute("INSERT INTO t (id, v) VALUES (?, (0.1, 0.2, 0.3, 0.4))", (n,))
            n += 1
        w.close()

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        con.execute(f"BACKUP TO '{copy}'")
    finally:
        stop.set()
        thread.join()
    con.close()
    other = tesseradb.connect(copy)
    rows = other.execute("SELECT COUNT(*) FROM t").fetchone()[0]
    assert rows >= 500
    report = other.execute("CHECK TABLE t").fetchall()
    assert report[-1][-1] == "OK", report                # rows, chunks and index agree in the copy
    other.close()


def test_tessera_backup_command(tmp_path):
    from tesseradb.clients.shell.main import main
    path, copy = str(tmp_path / "x.db"), str(tmp_path / "copy.db")
    con = tesseradb.connect(path)
    con.execute(DDL)
    _fill(con, 20)
    con.close()
    assert main(["backup", path, copy]) == 0
    assert tesseradb.connect(copy).execute("SELECT COUNT(*) FROM t").fetchone() == (20,)
    assert main(["backup", path, copy]) == 1              # never overwrites
    assert main(["backup", str(tmp_path / "missing.db"), str(tmp_path / "c2.db")]) == 1
    assert not os.path.exists(tmp_path / "missing.db")   # a backup does not create its source
