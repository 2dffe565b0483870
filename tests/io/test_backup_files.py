"""BACKUP TO follows the one file rule (io/file_access.py, secure_file_priv) like LOAD DATA and INTO
OUTFILE: outside the allowed folder it is refused with 1290 before anything is written, and the
refusal does not tell whether the path outside exists; a backup killed mid-copy leaves no temp file
once the next backup runs in that folder."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

import tesseradb


def _con(secure_file_priv):
    con = tesseradb.connect(secure_file_priv=secure_file_priv)
    con.execute("CREATE TABLE t (s string)")
    con.execute("INSERT INTO t (s) VALUES ('row chosen by the client')")
    con.commit()
    return con


def _refused(con, sql):
    with pytest.raises(tesseradb.OperationalError) as info:
        con.execute(sql)
    assert info.value.errno == 1290, info.value
    return info.value.msg


@pytest.fixture
def tree(tmp_path):
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (tmp_path / "exists.db").write_text("precious")
    return tmp_path, allowed


@pytest.mark.parametrize("path", ["{root}/new.db", "{root}/exists.db", "{root}/missing/x.db", "../new.db",
                                  "../exists.db", "link/x.db", "/proc/nowhere/x.db"])
def test_backup_outside_the_allowed_folder_is_refused_alike(tree, path):
    root, allowed = tree
    os.symlink(root, allowed / "link")
    con = _con(str(allowed))
    msg = _refused(con, f"BACKUP TO '{path.format(root=root)}'")
    assert str(root) not in msg and "exists" not in msg and "folder" not in msg
    assert sorted(os.listdir(root)) == ["allowed", "exists.db"]
    assert (root / "exists.db").read_text() == "precious"


def test_backup_refused_when_file_statements_are_disabled(tree):
    root, _ = tree
    con = _con("")
    _refused(con, f"BACKUP TO '{root}/new.db'")
    assert not (root / "new.db").exists()


def test_backup_inside_the_allowed_folder(tree):
    _, allowed = tree
    con = _con(str(allowed))
    con.execute("BACKUP TO 'copy.db'")                          # relative: inside the folder
    copy = tesseradb.connect(str(allowed / "copy.db"))
    assert copy.execute("SELECT s FROM t").fetchall() == [("row chosen by the client",)]
    copy.close()
    with pytest.raises(tesseradb.OperationalError) as info:     # never replaced
        con.execute(f"BACKUP TO '{allowed}/copy.db'")
    assert info.value.errno == 1086
    with pytest.raises(tesseradb.OperationalError) as info:     # a folder inside that is missing: named as written
        con.execute("BACKUP TO 'sub/copy.db'")
    assert info.value.errno != 1290 and "sub/copy.db" in info.value.msg


_KILLED_BACKUP = textwrap.dedent("""
    import sys, time, apsw, tesseradb
    from tesseradb.storage import rowstore

    class Stalled:                  # the copy's connection: the copy starts, then stalls until killed
        def __init__(self, path):
            self.real = apsw.Connection(path)
        def backup(self, *args):
            print("copying", flush=True)
            time.sleep(120)
        def __getattr__(self, name):
            return getattr(self.real, name)

    class Apsw:
        Connection = Stalled
        def __getattr__(self, name):
            return getattr(apsw, name)

    con = tesseradb.connect(sys.argv[1])
    rowstore.apsw = Apsw()
    con.execute("BACKUP TO '" + sys.argv[2] + "'")
""")


@pytest.mark.slow
def test_a_killed_backup_leaves_no_temp_file_after_the_next_backup(tmp_path):
    db = str(tmp_path / "x.db")
    con = tesseradb.connect(db)
    con.execute("CREATE TABLE t (s string)")
    con.execute("INSERT INTO t (s) VALUES ('a')")
    con.commit()
    out = tmp_path / "backups"
    out.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_BACKUP, db, str(out / "one.db")],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "copying"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert os.listdir(out) and "one.db" not in os.listdir(out)        # the killed copy's temp file
    con.execute(f"BACKUP TO '{out / 'two.db'}'")
    assert os.listdir(out) == ["two.db"]
    con.close()
