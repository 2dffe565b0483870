"""Opening never depends on the vector index caches (issues 21 and 28). The indexes are saved inside
the database file; release 0.2 kept them in a ``<db>.tessera`` folder, which is read once to migrate.
Whatever is in place of that folder or of one of its files — or of the saved index inside — connect()
succeeds at once (no blocking open), searches are right, and CHECK TABLE reports the index the
connection actually uses."""
from __future__ import annotations

import os
import shutil
import threading

import pytest

import tesseradb

SCHEMA = "CREATE TABLE t (v float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')"
OTHER = "CREATE TABLE u (v float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')"


def _build_legacy(path: str, saved_indexes) -> dict[str, str]:
    """A database as release 0.2 left it: its indexes only in <db>.tessera/<chunks>.faiss."""
    con = tesseradb.connect(path, autocommit=True)
    con.execute(SCHEMA)
    con.execute("INSERT INTO t (v) VALUES ((0, 1)), ((1, 0)), ((3, 3))")
    con.execute(OTHER)
    con.execute("INSERT INTO u (v) VALUES ((9, 9))")
    folder = path + ".tessera"
    os.mkdir(folder)
    files = {}
    for table in ("t", "u"):
        con.execute(f"SELECT id FROM {table} WHERE knn(v, 1, (0, 1))").fetchall()
        idx = con.db.column_index(con.db.table(table), "v")
        files[table] = os.path.join(folder, idx.name + ".faiss")
        idx.index.save(files[table], f"{idx.max_id}:{len(idx.index)}:{idx.name}")
    con.close()
    for name in saved_indexes(path).names():
        saved_indexes(path).delete(name)
    return files


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
    os.remove(f["t"])
    os.mkdir(f["t"])
    open(os.path.join(f["t"], "inside"), "w").close()


def _file_fifo(path, f):
    os.remove(f["t"])
    os.mkfifo(f["t"])


def _file_symlink(path, f):
    elsewhere = os.path.join(os.path.dirname(path), "elsewhere.faiss")
    shutil.move(f["t"], elsewhere)
    os.symlink(elsewhere, f["t"])


def _file_foreign(path, f):
    shutil.copy(f["u"], f["t"])


def _file_garbage(path, f):
    with open(f["t"], "wb") as out:
        out.write(os.urandom(500))


def _file_whole(path, f):
    pass


STATES = {
    "a whole 0.2 index file": _file_whole,
    "folder missing": _folder_missing,
    "folder is a file": _folder_file,
    "folder is a FIFO": _folder_fifo,
    "folder is a dangling symlink": _folder_dangling,
    "index file is a directory": _file_dir,
    "index file is a FIFO": _file_fifo,
    "index file is a symlink elsewhere": _file_symlink,
    "index file is another table's": _file_foreign,
    "index file is garbage": _file_garbage,
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
def test_any_state_of_a_0_2_cache_opens_searches_right_and_migrates(tmp_path, state, saved_indexes):
    path = str(tmp_path / "c.db")
    files = _build_legacy(path, saved_indexes)
    STATES[state](path, files)
    con, rows = _open_and_search(path)
    assert rows == [(1,), (2,), (3,)]
    check = con.execute("CHECK TABLE t").fetchall()
    assert check[-1][2:] == ("status", "OK"), check
    con.execute("INSERT INTO t (v) VALUES ((0, 2))")
    con.commit()
    assert len(con.execute("SELECT id FROM t WHERE knn(v, 10, (0, 1))").fetchall()) == 4
    con.close()
    t_name = os.path.basename(files["t"])[:-len(".faiss")]
    assert t_name in saved_indexes(path).names()              # saved inside the file now
    con, rows = _open_and_search(path)                         # and again after the migration
    assert rows == [(1,), (4,), (2,)]
    assert con.execute("CHECK TABLE t").fetchall()[-1][2:] == ("status", "OK")
    con.close()


def test_a_symlinked_0_2_index_file_is_never_written_through(tmp_path, saved_indexes):
    path = str(tmp_path / "s.db")
    files = _build_legacy(path, saved_indexes)
    _file_symlink(path, files)
    elsewhere = os.path.join(str(tmp_path), "elsewhere.faiss")
    before = open(elsewhere, "rb").read()
    con, _ = _open_and_search(path)
    con.execute("INSERT INTO t (v) VALUES ((0, 2))")
    con.commit()
    con.close()
    assert open(elsewhere, "rb").read() == before


def test_another_columns_saved_index_is_refused(tmp_path, saved_indexes):
    path = str(tmp_path / "f.db")
    con = tesseradb.connect(path, autocommit=True)
    con.execute(SCHEMA)
    con.execute("INSERT INTO t (v) VALUES ((0, 1)), ((1, 0)), ((3, 3))")
    con.execute(OTHER)
    con.execute("INSERT INTO u (v) VALUES ((9, 9))")
    names = {}
    for table in ("t", "u"):
        con.execute(f"SELECT id FROM {table} WHERE knn(v, 1, (0, 1))").fetchall()
        names[table] = con.db.column_index(con.db.table(table), "v").name
    con.close()
    saved = saved_indexes(path)
    saved.write(names["t"], saved.read(names["u"]))
    con, rows = _open_and_search(path)
    assert rows == [(1,), (2,), (3,)]
    check = con.execute("CHECK TABLE t").fetchall()
    assert check[-1][2:] == ("status", "OK")
    assert any("another column" in row[3] for row in check if row[2] == "note"), check
    con.close()


def test_check_table_notes_a_saved_index_damaged_while_the_connection_uses_its_index(tmp_path, saved_indexes):
    path = str(tmp_path / "d.db")
    con = tesseradb.connect(path, autocommit=True)
    con.execute(SCHEMA)
    con.execute("INSERT INTO t (v) VALUES ((0, 1)), ((1, 0)), ((3, 3))")
    con.execute("SELECT id FROM t WHERE knn(v, 1, (0, 1))").fetchall()
    con.close()
    con, _ = _open_and_search(path)             # loaded from the file: whole
    saved = saved_indexes(path)
    (name,) = saved.names()
    saved.write(name, os.urandom(500))
    check = con.execute("CHECK TABLE t").fetchall()
    assert check[-1][2:] == ("status", "OK")
    assert any("saved index is unusable" in row[3] for row in check), check
    con.close()                                 # saves it again
    con, rows = _open_and_search(path)
    assert [r for r in con.execute("CHECK TABLE t").fetchall() if r[2] == "note"] == []
    con.close()
