"""secure_file_priv for embedded use (tesseradb.connect(..., secure_file_priv=...)): LOAD DATA and
INTO OUTFILE stay inside the directory, symlinks included; "" refuses them; None is unrestricted."""
from __future__ import annotations

import os

import pytest

import tesseradb


@pytest.fixture
def tree(tmp_path):
    inside = tmp_path / "allowed"
    inside.mkdir()
    (tmp_path / "secret.csv").write_text("s\nsecret\n")
    (inside / "a.csv").write_text("s\nhello\n")
    (inside / "sub").mkdir()
    (inside / "sub" / "b.csv").write_text("s\nworld\n")
    return tmp_path, inside


def _con(secure_file_priv):
    con = tesseradb.connect(secure_file_priv=secure_file_priv)
    con.execute("CREATE TABLE t (s string)")
    return con


def _refused(con, sql):
    with pytest.raises(tesseradb.OperationalError) as info:
        con.execute(sql)
    assert info.value.errno == 1290, info.value
    return info.value.msg


def test_files_inside_the_directory_load(tree):
    _, inside = tree
    con = _con(str(inside))
    assert con.execute("LOAD DATA INFILE 'a.csv' INTO TABLE t").rowcount == 1
    assert con.execute(f"LOAD DATA INFILE '{inside}/sub/*.csv' INTO TABLE t").rowcount == 1
    assert sorted(con.execute("SELECT s FROM t").fetchall()) == [("hello",), ("world",)]


@pytest.mark.parametrize("path", ["{root}/secret.csv", "../secret.csv", "sub/../../secret.csv",
                                  "{root}/*.csv", "../*.csv", "link.csv", "/etc/*.csv", "/etc/passwd.csv",
                                  "*/../../secret.csv", "**/../*.csv", "{root}/nowhere/**/*.csv"])
def test_paths_leaving_the_directory_are_refused_without_naming_files(tree, path):
    root, inside = tree
    os.symlink(root / "secret.csv", inside / "link.csv")
    con = _con(str(inside))
    msg = _refused(con, f"LOAD DATA INFILE '{path.format(root=root)}' INTO TABLE t")
    assert "secret" not in msg and str(root) not in msg and "passwd" not in msg
    assert con.execute("SELECT COUNT(*) FROM t").fetchall() == [(0,)]


def test_a_glob_skips_a_symlink_out_with_a_warning_naming_the_link(tree):
    root, inside = tree
    os.symlink(root / "secret.csv", inside / "z.csv")
    os.symlink(root / "missing.csv", inside / "y.csv")     # dangling: skipped the same way
    con = _con(str(inside))
    assert con.execute("LOAD DATA INFILE '*.csv' INTO TABLE t").rowcount == 1
    skipped = [w for w in con.warnings if w[1] == 1290]
    assert [w[2] for w in skipped] == [f"'{n}' skipped: a symbolic link leading outside the --secure-file-priv "
                                       "directory" for n in ("y.csv", "z.csv")]
    assert con.execute("SELECT s FROM t").fetchall() == [("hello",)]


def test_a_recursive_glob_does_not_follow_a_folder_link_out(tree):
    root, inside = tree
    (root / "elsewhere").mkdir()
    (root / "elsewhere" / "c.csv").write_text("s\nsecret\n")
    os.symlink(root / "elsewhere", inside / "sub" / "away")
    os.symlink(inside, inside / "sub" / "loop")               # a loop inside: not entered again
    con = _con(str(inside))
    assert con.execute("LOAD DATA INFILE '**/*.csv' INTO TABLE t").rowcount == 2   # a, sub/b
    assert [w[2] for w in con.warnings if w[1] == 1290] == [
        "'sub/away' skipped: a symbolic link leading outside the --secure-file-priv directory"]
    assert ("secret",) not in con.execute("SELECT s FROM t").fetchall()


def test_a_fifo_is_not_a_file_to_load(tree):
    _, inside = tree
    os.mkfifo(inside / "pipe.csv")
    con = _con(str(inside))
    with pytest.raises(tesseradb.OperationalError) as info:
        con.execute("LOAD DATA INFILE 'pipe.csv' INTO TABLE t")      # would block forever if opened
    assert info.value.errno == 29


def test_outfile_is_confined_and_never_overwrites(tree):
    root, inside = tree
    con = _con(str(inside))
    con.execute("INSERT INTO t (s) VALUES ('x')")
    assert con.execute("SELECT s FROM t INTO OUTFILE 'out.csv'").rowcount == 1
    assert (inside / "out.csv").read_text().splitlines() == ['"s"', '"x"']
    with pytest.raises(tesseradb.OperationalError) as info:
        con.execute("SELECT s FROM t INTO OUTFILE 'out.csv'")
    assert info.value.errno == 1086 and "already exists" in info.value.msg
    _refused(con, f"SELECT s FROM t INTO OUTFILE '{root}/secret.csv'")
    os.symlink(root / "secret.csv", inside / "link.csv")
    _refused(con, "SELECT s FROM t INTO OUTFILE 'link.csv'")
    assert (root / "secret.csv").read_text() == "s\nsecret\n"
    assert not [p for p in os.listdir(inside) if p.startswith(".tessera-")]


def test_empty_secure_file_priv_refuses_every_file_statement(tree):
    _, inside = tree
    con = _con("")
    _refused(con, f"LOAD DATA INFILE '{inside}/a.csv' INTO TABLE t")
    _refused(con, f"SELECT 1 AS a INTO OUTFILE '{inside}/o.csv'")
    assert not (inside / "o.csv").exists()


def test_unrestricted_by_default(tree):
    root, _ = tree
    con = _con(None)
    assert con.execute(f"LOAD DATA INFILE '{root}/secret.csv' INTO TABLE t").rowcount == 1
    con.execute(f"SELECT s FROM t INTO OUTFILE '{root}/secret.csv'")     # replaces, as before
    assert (root / "secret.csv").read_text().splitlines() == ['"s"', '"secret"']


def test_read_only_connection_refuses_writes_from_the_parsed_statement(tmp_path):
    path = str(tmp_path / "r.db")
    with tesseradb.connect(path, autocommit=True) as con:
        con.execute("CREATE TABLE t (s string)")
    con = tesseradb.connect(path, read_only=True)
    for sql in ["INSERT INTO t (s) VALUES ('x')", "DROP TABLE t", f"SELECT 1 INTO OUTFILE '{tmp_path}/o.csv'",
                "WITH x AS (SELECT 1) DELETE FROM t", "CREATE VIEW v AS SELECT 1"]:
        with pytest.raises(tesseradb.OperationalError) as info:
            con.execute(sql)
        assert info.value.errno == 1290, sql
    assert con.execute("SELECT 'INTO OUTFILE ''x.csv''' AS a").fetchall() == [("INTO OUTFILE 'x.csv'",)]
    assert not (tmp_path / "o.csv").exists()
