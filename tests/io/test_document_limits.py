"""Documents cannot exhaust the process (issue 33): a YAML alias bomb, a self-referencing alias, HTML
nested 400 deep, a FIFO swapped in mid-SYNC, a file over the size cap: each is one skipped file with
a Warning naming it, and the rest of the load or SYNC goes on."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import tesseradb
from tesseradb.io import documents

DOCS = "CREATE TABLE d (path string UNIQUE, title text, body text, meta json, date string)"



def _bomb(levels: int) -> str:
    """YAML whose aliases expand to 9**levels strings when copied (9 levels: 353 bytes, 387 million)."""
    return ("---\na: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
            + "".join(f"{chr(98 + n)}: &{chr(98 + n)} [{','.join(['*' + chr(97 + n)] * 9)}]\n"
                      for n in range(levels - 1))
            + "---\nbody\n")


BOMB = _bomb(9)
SMALL_BOMB = _bomb(6)           # 531,441 strings: over the bound, yet harmless if it were expanded


def _sync(con, folder) -> dict[str, str]:
    """SYNC the folder; {file name: why it was skipped} from the statement's warnings."""
    con.execute("LOAD DATA INFILE ? SYNC INTO TABLE d", (f"{folder}/**/*",))
    return {m.split("' skipped: ")[0].rsplit("/", 1)[-1]: m.split("' skipped: ")[1]
            for level, code, m in con.warnings if "' skipped: " in m}


def _paths(con):
    return [r[0] for r in con.execute("SELECT path FROM d ORDER BY path").fetchall()]


@pytest.mark.slow
def test_an_alias_bomb_is_a_skipped_file_under_a_memory_cap(tmp_path):
    (tmp_path / "bomb.md").write_text(BOMB)
    (tmp_path / "good.md").write_text("# Good\n\nfine\n")
    script = textwrap.dedent(f"""
        import resource, tesseradb
        cap = 1 << 30
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        con = tesseradb.connect()
        con.execute({DOCS!r})
        con.execute("LOAD DATA INFILE ? SYNC INTO TABLE d", ({str(tmp_path)!r} + "/*.md",))
        warnings = [m for _, _, m in con.warnings if "skipped" in m]
        print(con.execute("SELECT path FROM d").fetchall())
        print(warnings)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stderr[-2000:]
    rows, warnings = out.stdout.splitlines()
    assert rows == "[('good.md',)]"
    assert "bomb.md' skipped: its front matter expands to more than" in warnings


def test_front_matter_bounded_in_process():
    with pytest.raises(documents.Unreadable, match="expands to more than"):
        documents.read_markdown(SMALL_BOMB.encode())
    with pytest.raises(documents.Unreadable, match="nested more than"):
        documents.read_markdown(b"---\na: &a [*a]\n---\nbody\n")


def test_one_odd_file_is_skipped_and_the_sync_goes_on(tmp_path):
    (tmp_path / "deep.html").write_text("<html><title>Deep</title><body>" + "<div>" * 400 + "deep text"
                                        + "</div>" * 400 + "<p>after</p></body></html>")
    (tmp_path / "selfref.md").write_text("---\na: &a [*a]\n---\nbody\n")
    (tmp_path / "bomb.md").write_text(SMALL_BOMB)
    (tmp_path / "good.md").write_text("# Good\n\nfine\n")
    con = tesseradb.connect()
    con.execute(DOCS)
    skipped = _sync(con, tmp_path)
    assert _paths(con) == ["deep.html", "good.md"]           # the deep HTML is read, flattened
    title, body = con.execute("SELECT title, body FROM d WHERE path = 'deep.html'").fetchone()
    assert title == "Deep" and "deep text" in body and "after" in body
    assert set(skipped) == {"selfref.md", "bomb.md"}
    assert skipped["selfref.md"].startswith("its front matter is nested more than")


def test_front_matter_with_a_bad_date_keeps_the_text_as_written(tmp_path):
    (tmp_path / "a.md").write_text("---\ntitle: Release\ndate: 2024-13-45\n---\nThe body.\n")
    con = tesseradb.connect()
    con.execute(DOCS)
    _sync(con, tmp_path)
    assert con.execute("SELECT title, body, date FROM d").fetchall() == [("Release", "The body.\n", "2024-13-45")]


def test_a_file_over_the_size_cap_is_skipped_unread(tmp_path):
    (tmp_path / "good.md").write_text("fine\n")
    with open(tmp_path / "huge.md", "wb") as f:                       # sparse: no disk used
        f.truncate(documents.MAX_DOCUMENT_BYTES + 1)
    con = tesseradb.connect()
    con.execute(DOCS)
    skipped = _sync(con, tmp_path)
    assert _paths(con) == ["good.md"]
    assert skipped["huge.md"] == (f"larger than the {documents.MAX_DOCUMENT_BYTES // (1 << 20)} MiB "
                                        "a document may be")


_FIFO_SWAP = textwrap.dedent("""
    import os, sys, tesseradb
    from tesseradb.io import documents
    real = documents.snapshot
    def swap_then_read(path):                 # the file becomes a FIFO after the glob saw a regular file
        if path.endswith("b.md"):
            os.unlink(path)
            os.mkfifo(path)
        return real(path)
    documents.snapshot = swap_then_read
    con = tesseradb.connect()
    con.execute("CREATE TABLE d (path string UNIQUE, body text)")
    con.execute("LOAD DATA INFILE ? SYNC INTO TABLE d", (sys.argv[1] + "/*.md",))
    warnings = [m.rsplit("/", 1)[-1] for _, _, m in con.warnings if "' skipped: " in m]
    print(sorted(r[0] for r in con.execute("SELECT path FROM d").fetchall()))
    print(warnings)
""")


@pytest.mark.slow
def test_a_fifo_swapped_in_mid_sync_is_skipped_never_waited_on(tmp_path):
    for name in ("a.md", "b.md", "c.md"):
        (tmp_path / name).write_text(f"{name}\n")
    out = subprocess.run([sys.executable, "-c", _FIFO_SWAP, str(tmp_path)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    rows, warnings = out.stdout.splitlines()
    assert rows == "['a.md', 'c.md']"
    assert warnings == "[\"b.md' skipped: not a regular file (a FIFO, a device or a folder)\"]"
