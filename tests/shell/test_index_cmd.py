"""``tessera index DB DIR [--table T] [--watch]``: a folder of documents as a table, kept in sync."""
from __future__ import annotations

import os
import sys
import queue
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import tesseradb
TESSERA = str(Path(sys.executable).parent / "tessera")


def write_vault(root, pages=3):
    (root / "ops").mkdir(parents=True)
    (root / "backups.md").write_text("---\ntitle: Backups\ntags: [ops]\n---\nBackups run nightly at two.\n")
    (root / "ops" / "tls.md").write_text("# Certificates\n\nRotate the TLS certificate every year.\n")
    (root / "ops" / "dns.html").write_text("<h1>Resolver</h1><p>Answers are cached for five minutes.</p>")
    return root


def test_index_creates_the_table_syncs_and_searches(run, tmp_path):
    write_vault(tmp_path / "vault")
    first = run("index", "notes.db", "vault")
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert lines[0] == ("CREATE TABLE `docs` (path string UNIQUE, title text, body text, meta json, "
                        "modified datetime,")
    assert "chunk_strategy=" in first.stdout and "from='title,body'" in first.stdout
    assert lines[-2].startswith("docs: 3 added, 0 changed, 0 unchanged, 0 removed, 0 skipped (")
    assert lines[-2].endswith(": added backups.md, ops/dns.html, ops/tls.md")     # the files it changed
    # the first run suggests one query, and that query runs
    example = ("SELECT path, title, knn_chunk_heading(), knn_chunk_text() FROM `docs` "
               "WHERE hybrid_match('your question', chunks) LIMIT 5;")
    assert lines[-1] == f'try: tessera notes.db -e "{example}"'
    tried = run("notes.db", "-e", example.replace("your question", "renew the certificate"))
    assert tried.returncode == 0 and tried.stdout.splitlines()[1].startswith("ops/tls.md\tCertificates")
    again = run("index", "notes.db", "vault")
    assert again.returncode == 0
    assert again.stdout == again.stdout.splitlines()[0] + "\n"        # no suggestion, no file names
    assert again.stdout.startswith("docs: 0 added, 0 changed, 3 unchanged, 0 removed, 0 skipped (")
    # a subfolder sync updates the rows under the root: still one row per file (issue 32)
    (tmp_path / "vault" / "ops" / "tls.md").write_text("# Certificates\n\nRotate the TLS certificate twice a year.\n")
    sub = run("index", "notes.db", "vault/ops")
    assert sub.returncode == 0 and sub.stdout.startswith("docs: 0 added, 1 changed, 1 unchanged, 0 removed")
    assert sub.stdout.rstrip().endswith(": changed ops/tls.md")
    con = tesseradb.connect(str(tmp_path / "notes.db"))
    cur = con.cursor()
    rows = cur.execute("SELECT path, title, meta, modified FROM docs ORDER BY path").fetchall()
    assert [r[:3] for r in rows] == [
        ("backups.md", "Backups", {"tags": ["ops"]}), ("ops/dns.html", "Resolver", {}),
        ("ops/tls.md", "Certificates", {})]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", str(r[3])) for r in rows)   # ISO, not Unix seconds
    assert cur.execute("SELECT path FROM docs WHERE knn(chunks, 1, 'renew the certificate')").fetchall() == \
        [("ops/tls.md",)]
    con.close()


def test_index_into_a_named_existing_table_and_errors(run, tmp_path):
    write_vault(tmp_path / "vault")
    missing = run("index", "notes.db", "nowhere")
    assert missing.returncode == 2 and "'nowhere' is not a directory" in missing.stderr
    con = tesseradb.connect(str(tmp_path / "notes.db"))
    con.cursor().execute("CREATE TABLE pages (path string, body text)")
    con.commit()
    con.close()
    refused = run("index", "notes.db", "vault", "--table", "pages")
    assert refused.returncode == 1
    assert "SYNC needs a unique column 'path' in table 'pages'" in refused.stderr
    assert "CREATE TABLE" not in refused.stdout


def test_passage_units_none_makes_a_table_without_units(run, tmp_path):
    write_vault(tmp_path / "vault")
    done = run("index", "notes.db", "vault", "--passage-units", "none")
    assert done.returncode == 0, done.stderr
    assert "passage_units='none')" in done.stdout
    con = tesseradb.connect(str(tmp_path / "notes.db"))
    assert con.describe("docs").column("chunks").vector.chunking.passage_units == "none"
    assert con.cursor().execute("SELECT path FROM docs WHERE knn(chunks, 1, 'renew the certificate')").fetchall() \
        == [("ops/tls.md",)]
    con.close()
    bad = run("index", "other.db", "vault", "--passage-units", "words")
    assert bad.returncode == 2 and "invalid choice: 'words'" in bad.stderr
    assert not (tmp_path / "other.db").exists()


class Lines:
    """The lines a running command prints, read on a thread so that waiting for one can time out."""

    def __init__(self, stream):
        self.queue: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream) -> None:
        for line in stream:
            self.queue.put(line)
        self.queue.put(None)

    def wait_for(self, text: str, timeout: float = 300) -> str:
        seen = ""
        deadline = time.monotonic() + timeout
        while text not in seen:
            try:
                line = self.queue.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                raise AssertionError(f"no {text!r} within {timeout} s in {seen!r}") from None
            assert line is not None, f"the command ended before {text!r}: {seen!r}"
            seen += line
        return seen


SUMMARY = re.compile(r"^docs: (\d+) added, (\d+) changed, (\d+) unchanged, (\d+) removed, (\d+) skipped", re.M)


def _synced(lines: Lines, added: int = 0, changed: int = 0, removed: int = 0) -> None:
    """Wait until the syncs printed since the last call add up to these counts (the watcher may see two
    files saved one after the other in one sync or in two, as the debounce falls)."""
    total = [0, 0, 0]
    while total[0] < added or total[1] < changed or total[2] < removed:
        seen = lines.wait_for(" skipped (")
        for m in SUMMARY.finditer(seen):
            total = [total[0] + int(m[1]), total[1] + int(m[2]), total[2] + int(m[4])]
    assert total == [added, changed, removed]


def test_watch_resyncs_on_changes_and_ctrl_c_stops_it(shell_env, tmp_path):
    vault = write_vault(tmp_path / "vault")
    proc = subprocess.Popen([TESSERA, "index", "notes.db", "vault", "--watch", "--debounce", "0.3"],
                            cwd=tmp_path, env=shell_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = Lines(proc.stdout)
    try:
        assert "docs: 3 added, 0 changed, 0 unchanged" in lines.wait_for("watching vault")
        (vault / "ops" / "tls.md").write_text("# Certificates\n\nRotate it every six months now.\n")
        (vault / "new.md").write_text("# Queues\n\nThe queue drains every minute.\n")
        _synced(lines, added=1, changed=1)
        os.remove(vault / "backups.md")
        (vault / "ignored.png").write_bytes(b"\x89PNG")
        _synced(lines, removed=1)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    con = tesseradb.connect(str(tmp_path / "notes.db"))
    assert con.cursor().execute("SELECT path FROM docs ORDER BY path").fetchall() == \
        [("new.md",), ("ops/dns.html",), ("ops/tls.md",)]
    con.close()


def test_ctrl_c_during_a_sync_rolls_it_back(shell_env, tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    for n in range(60):
        (vault / f"page{n:02}.md").write_text(" ".join(f"Page {n} sentence {k} is about topic {n * k}." for k in range(80)))
    proc = subprocess.Popen([TESSERA, "index", "notes.db", "vault"], cwd=tmp_path, env=shell_env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = Lines(proc.stdout)
    try:
        lines.wait_for("passage_units='windows');")     # the table exists; the sync is running
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=120) == 130
        assert "sync interrupted and rolled back" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
    con = tesseradb.connect(str(tmp_path / "notes.db"))
    assert con.cursor().execute("SELECT COUNT(*) FROM docs").fetchone() == (0,)
    con.close()


def test_sigterm_stops_the_watch_and_saves_the_index(shell_env, tmp_path):
    vault = write_vault(tmp_path / "vault")
    proc = subprocess.Popen([TESSERA, "index", "notes.db", "vault", "--watch", "--debounce", "0.3"],
                            cwd=tmp_path, env=shell_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = Lines(proc.stdout)
    try:
        lines.wait_for("watching vault")
        (vault / "new.md").write_text("# Queues\n\nThe queue drains every minute. Messages wait an hour.\n")
        _synced(lines, added=1)                       # committed; the saved index now lags by its chunks
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    con = tesseradb.connect(str(tmp_path / "notes.db"))
    assert con.execute("SELECT path FROM docs WHERE knn(chunks, 1, 'how fast does the queue drain')").fetchall() == \
        [("new.md",)]
    index = next(iter(con.db.indexes.values()))
    assert index.has_saved and index.saved_max_id == index.max_id     # saved when it stopped, not caught up
    con.close()
