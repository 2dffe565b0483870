"""An INSERT embeds before it takes SQLite's write lock (issue 33): while one process's INSERT of a
long document is in the model, another process's plain INSERT goes through, even with a short lock
wait; then the first INSERT takes the lock, finds the database changed, and writes with the vectors
it already made."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import tesseradb

DDL = ("CREATE TABLE docs (body text, v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
       "model_name='Xenova/all-MiniLM-L6-v2' from='body' chunk_strategy='sentence' max_tokens='32')")

_EMBEDDER = textwrap.dedent("""
    import os, sys, time, tesseradb
    db, gate = sys.argv[1], sys.argv[2]
    con = tesseradb.connect(db, autocommit=True)
    paused = []
    def progress(done, total):
        if not paused:                    # in the model: say so, and wait until the test lets go
            paused.append(1)
            print("embedding", flush=True)
            deadline = time.monotonic() + 120
            while not os.path.exists(gate) and time.monotonic() < deadline:
                time.sleep(0.02)
    con.set_progress(progress)
    body = " ".join(f"Sentence {n} says that backups run nightly and restores start from snapshots." for n in range(300))
    cur = con.execute("INSERT INTO docs (id, body) VALUES (1, ?)", (body,))
    print("inserted", cur.rowcount, flush=True)
    print([w[1] for w in con.warnings], flush=True)
""")


@pytest.mark.slow
def test_a_plain_insert_goes_through_while_another_process_embeds(tmp_path):
    db, gate = str(tmp_path / "x.db"), str(tmp_path / "go")
    con = tesseradb.connect(db, autocommit=True)
    con.execute(DDL)
    con.execute("CREATE TABLE log (msg string)")
    con.close()
    proc = subprocess.Popen([sys.executable, "-c", _EMBEDDER, db, gate], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "embedding", proc.stderr.read()
        other = tesseradb.connect(db, autocommit=True, timeout=1.0)      # a one-second lock wait
        other.execute("INSERT INTO log (msg) VALUES ('written while the other process embeds')")
        other.close()
    finally:
        open(gate, "w").close()
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-3000:]
    assert out.splitlines()[0] == "inserted 1"
    check = tesseradb.connect(db)
    assert check.execute("SELECT msg FROM log").fetchall() == [("written while the other process embeds",)]
    chunks = check.execute("SHOW CHUNKS FROM docs.v WHERE id = 1").fetchall()
    assert len(chunks) > 100                                            # the long document, whole
    assert check.execute("SELECT id FROM docs WHERE knn(v, 1, 'where do restores start')").fetchall() == [(1,)]
    check.close()
