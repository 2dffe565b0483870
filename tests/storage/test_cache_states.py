"""Opening never depends on the vector index caches (issue 21): whatever is in place of the
``<db>.tessera`` folder or of an index file, connect() succeeds at once, searches are right, a
warning says what happened, and CHECK TABLE reports the index the connection actually uses."""
from __future__ import annotations

import glob
import os
import shutil
import threading

import pytest

import tesseradb

SCHEMA = "CREATE TABLE t (v float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')"
OTHER = "CREATE TABLE u (v float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')"


def _build(path: str) -> str:
    con = tesseradb.connect(path, autocommit=True)
    con.execute(SCHEMA)
    con.execute("INSERT INTO t (v) VALUES ((0, 1)), ((1, 0)), ((3, 3))")
    con.execute(OTHER)
    con.execute("INSERT INTO u (v) VALUES ((9, 9))")
    for table in ("t", "u"):
        con.execute(f"SELECT id FROM {table} WHERE knn(v, 1, (0, 1))").fetchall()
    chunks = con.db.tables["t"].layout("v").chunks
    con.close()
    return os.path.join(path + ".tessera", chunks + ".faiss")


def _other_file(path: str, mine: str) -> str:
    return next(f for f in glob.glob(path + ".tessera/*.faiss") if f != mine)


def _folder_file(path, f):
    shutil.rmtree(path + ".tessera")
    with open(path + ".tessera", "w") as out:
        out.write("not a folder")


def _folder_fifo(path, f):
    shutil.rmtree(path + ".tessera")
    os.mkfifo(path + ".tessera")


def _folder_dangling(path, f):
    shutil.rmtree(path + ".tessera")
    os.symlink(os.path.join(os.path.dirname(path), "nowhere", "x"), path + ".tessera")


def _folder_missing(path, f):
    shutil.rmtree(path + ".tessera")


def _file_dir(path, f):
    os.remove(f)
    os.mkdir(f)
    open(os.path.join(f, "inside"), "w").close()


def _file_fifo(path, f):
    os.remove(f)
    os.mkfifo(f)


def _file_symlink(path, f):
    elsewhere = os.path.join(os.path.dirname(path), "elsewhere.faiss")
    shutil.move(f, elsewhere)
    os.symlink(elsewhere, f)


def _file_foreign(path, f):
    shutil.copy(_other_file(path, f), f)


def _file_garbage(path, f):
    with open(f, "wb") as out:
        out.write(os.urandom(500))


STATES = {
    "folder missing": (_folder_missing, None),
    "folder is a file": (_folder_file, "kept in memory"),
    "folder is a FIFO": (_folder_fifo, "kept in memory"),
    "folder is a dangling symlink": (_folder_dangling, "kept in memory"),
    "index file is a directory": (_file_dir, "is a directory"),
    "index file is a FIFO": (_file_fifo, "is a FIFO"),
    "index file is a symlink elsewhere": (_file_symlink, "symbolic link"),
    "index file is another table's": (_file_foreign, "another column"),
    "index file is garbage": (_file_garbage, "unusable"),
}


def _open_and_search(path: str) -> tuple[tesseradb.Connection, list]:
    """connect() and one search, on a thread: a blocking open would hang it, and the test says so."""
    out: dict = {}

    def run():
        con = tesseradb.connect(path)
        out["rows"] = con.execute("SELECT id FROM t WHERE knn(v, 3, (0, 1))").fetchall()
        out["con"] = con

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "connect() or the first search blocked"
    return out["con"], out["rows"]


@pytest.mark.parametrize("state", list(STATES))
def test_any_cache_state_opens_and_searches_right(tmp_path, state):
    path = str(tmp_path / "c.db")
    f = _build(path)
    damage, said = STATES[state]
    damage(path, f)
    con, rows = _open_and_search(path)
    assert rows == [(1,), (2,), (3,)]
    check = con.execute("CHECK TABLE t").fetchall()
    assert check[-1][2:] == ("status", "OK"), check
    if said is not None:
        assert any(said in row[3] for row in check if row[2] == "note"), check
    again = con.execute("CHECK TABLE t").fetchall()            # the same state, not "Corrupt" forever
    assert again[-1][2:] == ("status", "OK")
    con.execute("INSERT INTO t (v) VALUES ((0, 2))")
    con.commit()
    assert len(con.execute("SELECT id FROM t WHERE knn(v, 10, (0, 1))").fetchall()) == 4
    con.close()
    con, rows = _open_and_search(path)                         # and again after the rebuild
    assert rows == [(1,), (4,), (2,)]
    assert con.execute("CHECK TABLE t").fetchall()[-1][2:] == ("status", "OK")
    con.close()


def test_a_folder_that_cannot_be_used_is_a_warning_at_connect(tmp_path):
    path = str(tmp_path / "w.db")
    f = _build(path)
    _folder_file(path, f)
    con = tesseradb.connect(path)
    assert any("cache folder" in w[2] and "in memory" in w[2] for w in con.warnings)
    assert str(tmp_path) not in " ".join(w[2] for w in con.warnings)
    con.close()
    assert open(path + ".tessera").read() == "not a folder"      # what was there is left alone


def test_a_symlinked_index_file_is_replaced_not_written_through(tmp_path):
    path = str(tmp_path / "s.db")
    f = _build(path)
    _file_symlink(path, f)
    elsewhere = os.path.join(str(tmp_path), "elsewhere.faiss")
    before = open(elsewhere, "rb").read()
    con, _ = _open_and_search(path)
    con.execute("INSERT INTO t (v) VALUES ((0, 2))")
    con.commit()
    con.close()
    assert open(elsewhere, "rb").read() == before
    assert not os.path.islink(f) and os.path.isfile(f)


def test_check_table_notes_a_file_damaged_while_the_connection_uses_its_index(tmp_path):
    path = str(tmp_path / "d.db")
    f = _build(path)
    con, _ = _open_and_search(path)             # loaded from the file: whole
    _file_garbage(path, f)
    check = con.execute("CHECK TABLE t").fetchall()
    assert check[-1][2:] == ("status", "OK")
    assert any("on disk is unusable" in row[3] for row in check), check
    con.close()                                 # rewrites it
    con, rows = _open_and_search(path)
    assert [r for r in con.execute("CHECK TABLE t").fetchall() if r[2] == "note"] == []
    con.close()
