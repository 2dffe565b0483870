"""Document loads over ``tessera serve --secure-file-priv DIR`` (issue 25, safety): LOAD DATA and
LOAD DATA ... SYNC of a markdown folder read inside DIR only. A path or a glob's folder leaving DIR
(absolute, ``..``, a symlinked folder) is ERROR 1290 before anything is read and changes nothing; a
link out of DIR that a glob meets (a file or a folder, ``**`` included, whether its target exists or
not) is skipped with a Warning 1290 naming the link, and nothing behind it is read.

The server is the real ``tessera serve`` process; the clients are PyMySQL and the mariadb CLI."""
from __future__ import annotations

import os
import signal

import pymysql
import pytest

from tests.server.support import Process, connect, mariadb

REFUSED = ("ERROR 1290 (HY000) at line 1: The server is running with the --secure-file-priv option so it "
           "cannot execute this statement")
LINK_OUT = "skipped: a symbolic link leading outside the --secure-file-priv directory"
SECRET = "SECRET-TOKEN-42"


@pytest.fixture
def tree(tmp_path):
    """allowed/vault: two markdown pages, a link to a file outside, a link to a folder outside, a
    dangling link out; allowed/away: a folder link out; outside/: what must never be read."""
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    (allowed / "vault" / "guides").mkdir(parents=True)
    (outside / "private").mkdir(parents=True)
    (allowed / "vault" / "intro.md").write_text("---\ntitle: Intro\n---\n# Intro\n\nHello from the vault.\n")
    (allowed / "vault" / "guides" / "setup.md").write_text("# Setup\n\n## Install\n\nRun the installer.\n")
    (outside / "secret.md").write_text(f"# Secret\n\n{SECRET}\n")
    (outside / "private" / "diary.md").write_text(f"# Diary\n\n{SECRET}\n")
    os.symlink(outside / "secret.md", allowed / "vault" / "leak.md")
    os.symlink(outside / "private", allowed / "vault" / "shared")
    os.symlink(outside / "gone.md", allowed / "vault" / "dangling.md")
    os.symlink(outside, allowed / "away")
    return tmp_path, allowed, outside


@pytest.fixture
def served(tree, tmp_path):
    _, allowed, _ = tree
    proc = Process(str(tmp_path / "notes.db"), "--secure-file-priv", str(allowed))
    with connect(proc.port) as c, c.cursor() as cur:
        cur.execute("CREATE TABLE notes (path string UNIQUE, title text, body text)")
    yield proc
    proc.stop(signal.SIGKILL)


def _rows(port: int) -> list[tuple]:
    with connect(port) as c, c.cursor() as cur:
        cur.execute("SELECT path, title, body FROM notes ORDER BY path")
        return list(cur.fetchall())


def _run(port: int, sql: str) -> list[tuple]:
    """Run ``sql``; its warnings (level, code, message)."""
    with connect(port) as c, c.cursor() as cur:
        cur.execute(sql)
        cur.execute("SHOW WARNINGS")
        return list(cur.fetchall())


def _refused(port: int, sql: str) -> str:
    with connect(port) as c, c.cursor() as cur:
        with pytest.raises(pymysql.err.OperationalError) as info:
            cur.execute(sql)
    code, msg = info.value.args
    assert code == 1290, (sql, msg)
    assert msg.startswith("The server is running with the --secure-file-priv option"), msg
    return msg


def test_load_data_of_a_markdown_folder_inside_the_directory(served):
    warnings = _run(served.port, "LOAD DATA INFILE 'vault/**/*.md' INTO TABLE notes")
    rows = _rows(served.port)
    assert [(p, t) for p, t, _ in rows] == [("guides/setup.md", "Setup"), ("intro.md", "Intro")]
    assert "Run the installer." in rows[0][2]
    assert all(SECRET not in body for _, _, body in rows)
    skipped = sorted(w[2] for w in warnings if w[1] == 1290)
    assert skipped == [f"'vault/{name}' {LINK_OUT}" for name in ("dangling.md", "leak.md", "shared")]
    assert all(w[0] == "Warning" for w in warnings if w[1] == 1290)


def test_the_mariadb_cli_loads_inside_and_shows_the_skipped_links(served):
    out = mariadb(served.port, "-B", "-N", sql="LOAD DATA INFILE 'vault/*.md' INTO TABLE notes; SHOW WARNINGS;"
                  "SELECT path FROM notes ORDER BY path;", database="docs", check=True)
    lines = out.stdout.splitlines()
    assert f"Warning\t1290\t'vault/leak.md' {LINK_OUT}" in lines
    assert f"Warning\t1290\t'vault/dangling.md' {LINK_OUT}" in lines
    assert lines[-1] == "intro.md"
    assert SECRET not in out.stdout


LEAVING = [
    "{outside}/secret.md",                  # absolute, outside
    "{outside}/**/*.md",                    # a glob outside
    "{outside}/nothing-here/**/*.md",       # a folder outside that does not exist: the same answer
    "../outside/*.md",                      # '..' in the folder part
    "vault/../../outside/secret.md",        # '..' in a file path
    "vault/*/../../../outside/*.md",        # '..' after a wildcard
    "away/*.md",                            # a symlinked folder leaving the directory
    "away/**/*.md",
    "vault/leak.md",                        # a link to a file outside, named
    "vault/dangling.md",                    # a link out whose target does not exist
    "vault/shared/diary.md",                # a file below a folder link out
]


def test_paths_leaving_the_directory_are_refused_and_change_nothing(served, tree):
    root, _, outside = tree
    _run(served.port, "LOAD DATA INFILE 'vault/intro.md' INTO TABLE notes")
    before = _rows(served.port)
    assert [r[0] for r in before] == ["intro.md"]
    for path in LEAVING:                    # one server for all: each a statement of its own
        for sync in ("", "SYNC "):
            msg = _refused(served.port, f"LOAD DATA INFILE '{path.format(outside=outside)}' {sync}INTO TABLE notes")
            assert str(root) not in msg and "secret" not in msg and "diary" not in msg, (path, msg)
            assert _rows(served.port) == before, path


def test_the_mariadb_cli_sees_mysqls_1290_wording(served, tree):
    _, _, outside = tree
    out = mariadb(served.port, sql=f"LOAD DATA INFILE '{outside}/**/*.md' SYNC INTO TABLE notes;", database="docs")
    assert out.returncode == 1
    error = [line for line in out.stderr.splitlines() if line.startswith("ERROR")]
    assert len(error) == 1 and error[0].startswith(REFUSED), out.stderr
    assert str(outside) not in error[0]
    assert _rows(served.port) == []


def test_sync_follows_the_same_rules(served, tree):
    _, allowed, outside = tree
    vault = allowed / "vault"
    warnings = _run(served.port, "LOAD DATA INFILE 'vault/**/*.md' SYNC INTO TABLE notes")
    note = [w[2] for w in warnings if w[1] == 1000 and "SYNC" in w[2]]
    assert note and note[0].endswith(": 2 added, 0 changed, 0 unchanged, 0 removed, 3 skipped"), note
    assert sorted(w[2] for w in warnings if w[1] == 1290) == [
        f"'vault/{name}' {LINK_OUT}" for name in ("dangling.md", "leak.md", "shared")]
    assert [r[0] for r in _rows(served.port)] == ["guides/setup.md", "intro.md"]

    # a page replaced by a link out is no longer the folder's: its row goes, nothing outside is read
    (vault / "guides" / "setup.md").unlink()
    os.symlink(outside / "private" / "diary.md", vault / "guides" / "setup.md")
    (vault / "guides" / "new.md").write_text("# New\n\nA new page.\n")
    warnings = _run(served.port, "LOAD DATA INFILE 'vault/**/*.md' SYNC INTO TABLE notes")
    note = [w[2] for w in warnings if w[1] == 1000 and "SYNC" in w[2]]
    assert note[0].endswith(": 1 added, 0 changed, 1 unchanged, 1 removed, 4 skipped"), note
    assert f"'vault/guides/setup.md' {LINK_OUT}" in [w[2] for w in warnings]
    rows = _rows(served.port)
    assert [r[0] for r in rows] == ["guides/new.md", "intro.md"]
    assert all(SECRET not in body for _, _, body in rows)
