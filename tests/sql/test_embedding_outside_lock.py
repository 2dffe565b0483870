"""An INSERT embeds before it takes SQLite's write lock (issue 33): while one process's INSERT of a
long document is in the model, another process's plain INSERT goes through, even with a short lock
wait; then the first INSERT takes the lock, finds the database changed, and writes with the vectors
it already made."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

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


# -- in one process: the lock is free while the model runs ------------------------------------------
LONG = " ".join(f"Sentence {n} says that backups run nightly and restores start from snapshots." for n in range(60))


def _pause_in_model(con) -> tuple[threading.Event, threading.Event]:
    """con's next embedding stops in the model until ``release`` is set; ``inside`` says it got there."""
    inside, release = threading.Event(), threading.Event()

    def progress(done: int, total: int) -> None:
        if not inside.is_set():
            inside.set()
            release.wait(120)
    con.set_progress(progress)
    return inside, release


def _in_thread(fn) -> tuple[threading.Thread, list]:
    out: list = []

    def body() -> None:
        try:
            out.append(fn())
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out.append(exc)
    t = threading.Thread(target=body)
    t.start()
    return t, out


def _write_while_in_model(two, run) -> list:
    """Run ``run`` on the first connection, pause it inside the model, write from the second
    connection with lock wait 0 meanwhile; the first one's result (or exception) in a list."""
    con, other = two
    inside, release = _pause_in_model(con)
    worker, out = _in_thread(run)
    try:
        assert inside.wait(120), out
        other.execute("INSERT INTO log (msg) VALUES ('no wait')")      # lock wait 0: it is free
    finally:
        release.set()
        worker.join(300)
    return out


@pytest.fixture
def two(tmp_path):
    """A file with a model column and a plain table; the writer that embeds, and another writer whose
    lock wait is 0 (it fails at once if the lock is taken)."""
    db = str(tmp_path / "x.db")
    con = tesseradb.connect(db, autocommit=True)
    con.execute(DDL)
    con.execute("CREATE TABLE log (msg string)")
    con.execute("INSERT INTO docs (id, body) VALUES (7, 'A short note about pasta.')")
    con.execute("CREATE TABLE src (msg text)")
    con.execute("INSERT INTO src (id, msg) VALUES (1, ?)", (LONG,))
    other = tesseradb.connect(db, autocommit=True, timeout=0)
    yield con, other
    con.close()
    other.close()


@pytest.mark.parametrize("statement", [
    lambda con: con.execute("INSERT INTO docs (id, body) VALUES (1, ?)", (LONG,)),
    lambda con: con.execute("REPLACE INTO docs (id, body) VALUES (7, ?)", (LONG,)),
    lambda con: con.execute("UPDATE docs SET body = ? WHERE id = 7", (LONG,)),
    lambda con: con.executemany("INSERT INTO docs (id, body) VALUES (?, ?)", [(1, LONG), (2, LONG + " Two.")]),
    lambda con: con.execute("INSERT INTO docs (id, body) SELECT id, msg FROM src"),
], ids=["insert", "replace", "update", "executemany", "insert-select"])
def test_another_writer_goes_through_while_a_write_is_in_the_model(two, statement):
    con, other = two
    out = _write_while_in_model(two, lambda: statement(con).rowcount)
    assert out and not isinstance(out[0], BaseException), out
    assert other.execute("SELECT msg FROM log").fetchall() == [("no wait",)]
    ids = [r[0] for r in other.execute("SELECT id FROM docs WHERE knn(v, 3, 'where do restores start')")]
    assert ids[0] in (1, 7)
    chunks = other.execute(f"SHOW CHUNKS FROM docs.v WHERE id = {ids[0]}").fetchall()
    assert len(chunks) > 20                                             # the long document, whole


def test_inside_a_transaction_the_lock_is_held_already(two):
    con, other = two
    con.execute("BEGIN")
    inside, release = _pause_in_model(con)
    worker, out = _in_thread(lambda: con.execute("INSERT INTO docs (id, body) VALUES (1, ?)", (LONG,)).rowcount)
    try:
        assert inside.wait(120), out
        with pytest.raises(tesseradb.OperationalError) as err:        # BEGIN took the lock
            other.execute("INSERT INTO log (msg) VALUES ('waits')")
        assert err.value.errno == 1205
    finally:
        release.set()
        worker.join(300)
    assert out == [1]
    con.execute("ROLLBACK")
    assert other.execute("SELECT COUNT(*) FROM docs").fetchall() == [(1,)]


def test_what_the_model_made_first_is_said_once_with_the_row_id(tmp_path):
    con = tesseradb.connect(str(tmp_path / "x.db"), autocommit=True)
    con.execute("CREATE TABLE d (body text, v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
                "model_name='Xenova/all-MiniLM-L6-v2' from='body' chunk_strategy='sentence' max_tokens='32' "
                "max_chunks='2')")
    with pytest.warns(tesseradb.DataTruncatedWarning):
        con.execute("INSERT INTO d (id, body) VALUES (5, ?)", (LONG,))
    said = [w[2] for w in con.warnings]
    assert len(said) == 1 and "id 5" in said[0] and "max_chunks=2" in said[0], said
    with pytest.warns(tesseradb.DataTruncatedWarning):
        con.execute("INSERT INTO d (id, body) VALUES (6, ?)", (LONG,))     # the same text: every chunk reused
    said = [w[2] for w in con.warnings]
    assert any("2 of 2 chunks reused" in s for s in said), said
    assert con.execute("SELECT COUNT(*) FROM d").fetchall() == [(2,)]
    con.close()


def test_a_row_the_first_pass_cannot_embed_fails_as_before_and_leaves_nothing(two):
    """The pass before the lock leaves a row's error to the statement itself, which says it with the
    row and its id, and changes nothing (the good row's vectors made before the lock are dropped)."""
    con, other = two
    with pytest.raises(tesseradb.DataError) as err:
        con.execute("INSERT INTO docs (id, body) VALUES (1, ?), (2, ?)", (LONG, "bad \udcff text"))
    assert "row 2" in str(err.value) and "id 2" in str(err.value) and "not valid UTF-8" in str(err.value)
    assert con.execute("SELECT id FROM docs ORDER BY id").fetchall() == [(7,)]
    con.execute("INSERT INTO docs (id, body) VALUES (1, ?)", (LONG,))      # and the next statement is whole
    assert len(other.execute("SHOW CHUNKS FROM docs.v WHERE id = 1").fetchall()) > 20


# -- LOAD DATA: data files and documents embed their first rows before the lock ---------------------
def _files(tmp_path):
    """A CSV, a JSONL and two markdown notes, each with the long text."""
    import json
    (tmp_path / "d.csv").write_text('id,body\n1,"' + LONG + '"\n2,A short line.\n')
    (tmp_path / "d.jsonl").write_text(json.dumps({"id": 1, "body": LONG}) + "\n"
                                      + json.dumps({"id": 2, "body": "A short line."}) + "\n")
    (tmp_path / "d.txt").write_text("1|" + LONG + "\n2|A short line.\n")     # MySQL's delimited text
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Backups\n\n" + LONG + "\n")
    (notes / "b.md").write_text("# Pasta\n\nA short note about pasta.\n")
    return tmp_path


LOADS = {"csv": "LOAD DATA INFILE '{d}/d.csv' INTO TABLE {t}",
         "jsonl": "LOAD DATA INFILE '{d}/d.jsonl' INTO TABLE {t}",
         "documents": "LOAD DATA INFILE '{d}/notes/*.md' INTO TABLE {t}",
         "sync": "LOAD DATA INFILE '{d}/notes/*.md' SYNC INTO TABLE {t}",
         "fields": "LOAD DATA INFILE '{d}/d.txt' INTO TABLE {t} FIELDS TERMINATED BY '|' (id, body)",
         "ignore": "LOAD DATA INFILE '{d}/d.csv' IGNORE INTO TABLE {t}"}
NOTES_DDL = ("CREATE TABLE {t} (path string, title text, body text, v float_vector_array knn_type='hnsw' "
             "hnsw_similarity='cosine' model_name='Xenova/all-MiniLM-L6-v2' from='title,body' "
             "chunk_strategy='sentence' max_tokens='32')")


def _target(con, kind: str, name: str) -> str:
    if kind in ("documents", "sync"):
        con.execute(NOTES_DDL.format(t=name).replace("path string", "path string UNIQUE" if kind == "sync"
                                                     else "path string"))
    else:
        con.execute(DDL.replace("docs", name, 1))
    return name


@pytest.mark.parametrize("kind", list(LOADS))
def test_another_writer_goes_through_while_a_load_is_in_the_model(two, tmp_path, kind):
    con, other = two
    d = _files(tmp_path)
    table = _target(con, kind, "loaded")
    out = _write_while_in_model(two, lambda: con.execute(LOADS[kind].format(d=d, t=table)).rowcount)
    assert out == [2], out
    assert other.execute("SELECT msg FROM log").fetchall() == [("no wait",)]
    ids = [r[0] for r in other.execute("SELECT id FROM loaded WHERE knn(v, 2, 'where do restores start')")]
    assert len(other.execute(f"SHOW CHUNKS FROM loaded.v WHERE id = {ids[0]}").fetchall()) > 20


@pytest.mark.parametrize("kind", list(LOADS))
def test_a_load_stores_the_same_chunks_and_vectors_as_one_embedded_under_the_lock(tmp_path, kind):
    """The same load, once from autocommit (first pass before the lock) and once inside BEGIN (no first
    pass: all of it embedded under the lock): the same rows, chunks and vectors."""
    d = _files(tmp_path)
    con = tesseradb.connect(str(tmp_path / "x.db"), autocommit=True)
    seen = []
    for name, bracket in (("first", False), ("locked", True)):
        _target(con, kind, name)
        if bracket:
            con.execute("BEGIN")
        assert con.execute(LOADS[kind].format(d=d, t=name)).rowcount == 2
        if bracket:
            con.execute("COMMIT")
        rows = con.execute(f"SELECT id, body, v FROM {name} ORDER BY id").fetchall()
        chunks = [con.execute(f"SHOW CHUNKS FROM {name}.v WHERE id = {r[0]}").fetchall() for r in rows]
        seen.append((rows, chunks))
    assert seen[0] == seen[1]
    assert len(seen[0][1][0]) > 20
    con.close()


def test_a_load_with_a_bad_row_fails_with_its_line_and_writes_nothing(two, tmp_path):
    con, _ = two
    (tmp_path / "bad.csv").write_text('id,body\n1,"' + LONG + '"\nx,A short line.\n')
    with pytest.raises(tesseradb.Error) as err:
        con.execute(f"LOAD DATA INFILE '{tmp_path}/bad.csv' INTO TABLE docs")
    assert "bad.csv' line 3" in str(err.value), err.value
    assert con.execute("SELECT id FROM docs ORDER BY id").fetchall() == [(7,)]


@pytest.mark.parametrize("statement", [
    "LOAD DATA INFILE '{root}/secret.csv' INTO TABLE docs",
    "LOAD DATA INFILE '{root}/notes/*.md' INTO TABLE notes",
    "LOAD DATA INFILE '{root}/notes/*.md' SYNC INTO TABLE notes",
    "LOAD DATA INFILE '{root}/d.txt' INTO TABLE docs FIELDS TERMINATED BY '|' (id, body)",
    "LOAD DATA INFILE '{root}/secret.csv' IGNORE INTO TABLE docs",
], ids=["csv", "documents", "sync", "fields", "ignore"])
def test_a_refused_load_is_refused_before_anything_is_read(tmp_path, statement):
    root = _files(tmp_path)
    (root / "secret.csv").write_text('id,body\n1,"' + LONG + '"\n')
    inside = root / "inside"
    inside.mkdir()
    con = tesseradb.connect(secure_file_priv=str(inside))
    con.execute(DDL)
    con.execute(NOTES_DDL.format(t="notes").replace("path string", "path string UNIQUE"))
    read = []
    con.set_progress(lambda done, total: read.append(done))          # the model would run on what was read
    with pytest.raises(tesseradb.OperationalError) as err:
        con.execute(statement.format(root=root))
    assert err.value.errno == 1290
    assert read == []
    assert con.execute("SELECT COUNT(*) FROM docs").fetchall() == [(0,)]
    con.close()


# -- SYNC: only new and changed files, read again under the lock -----------------------------------
def test_another_writer_goes_through_while_a_sync_embeds_a_changed_file(two, tmp_path):
    con, other = two
    notes = _files(tmp_path) / "notes"
    table = _target(con, "sync", "synced")
    (notes / "a.md").write_text("# Backups\n\nA short note about backups.\n")
    assert con.execute(LOADS["sync"].format(d=tmp_path, t=table)).rowcount == 2
    (notes / "a.md").write_text("# Backups\n\n" + LONG + "\n")                      # changed: long now
    out = _write_while_in_model(two, lambda: con.execute(LOADS["sync"].format(d=tmp_path, t=table)).rowcount)
    assert out == [1], out
    assert other.execute("SELECT msg FROM log").fetchall() == [("no wait",)]
    assert any("0 added, 1 changed, 1 unchanged" in w[2] for w in con.warnings), con.warnings
    (row,) = other.execute("SELECT id FROM synced WHERE path = 'a.md'").fetchall()
    assert len(other.execute(f"SHOW CHUNKS FROM synced.v WHERE id = {row[0]}").fetchall()) > 20


@pytest.fixture
def spied(monkeypatch):
    """Every text the model embeds, and every document file read (parsed), in order."""
    from tesseradb import embed
    from tesseradb.io import documents
    model = embed.get_model("Xenova/all-MiniLM-L6-v2")
    texts: list[str] = []
    files: list[str] = []
    real_embed, real_parse = model.embed, documents.parse

    def embed_and_record(batch, **kw):
        texts.extend(batch)
        return real_embed(batch, **kw)

    def parse_and_record(path, *args, **kw):
        files.append(path.rsplit("/", 1)[-1])
        return real_parse(path, *args, **kw)
    monkeypatch.setattr(model, "embed", embed_and_record)
    monkeypatch.setattr(documents, "parse", parse_and_record)
    return texts, files


def test_a_sync_neither_reads_nor_embeds_unchanged_files(tmp_path, spied):
    texts, files = spied
    notes = _files(tmp_path) / "notes"
    (notes / "c.md").write_text("# Tea\n\nGreen tea steeps for two minutes.\n")
    con = tesseradb.connect(str(tmp_path / "x.db"), autocommit=True)
    _target(con, "sync", "synced")
    con.execute(LOADS["sync"].format(d=tmp_path, t="synced"))
    (notes / "b.md").write_text("# Pasta\n\nA short note about pasta. Salt the water first.\n")
    texts.clear()
    files.clear()
    assert con.execute(LOADS["sync"].format(d=tmp_path, t="synced")).rowcount == 1
    assert set(files) == {"b.md"}                       # read before the lock and under it: nothing else
    assert texts and all("pasta" in t or "Salt" in t for t in texts), texts     # only the edited file's
    texts.clear()
    files.clear()
    assert con.execute(LOADS["sync"].format(d=tmp_path, t="synced")).rowcount == 0
    assert texts == [] and files == []                  # nothing changed: no model call, no file parsed
    con.close()


def test_an_ignore_load_does_not_embed_rows_it_skips(two, tmp_path, spied):
    """LOAD DATA ... IGNORE: a row repeating a committed key is skipped (Warning 1062); the first pass
    passes it over too, so the model never sees its text."""
    texts, _ = spied
    con, _other = two
    d = _files(tmp_path)
    con.execute("INSERT INTO docs (id, body) VALUES (1, 'Already here.')")
    texts.clear()
    assert con.execute(LOADS["ignore"].format(d=d, t="docs")).rowcount == 1
    assert [w[1] for w in con.warnings] == [1062]
    assert texts and not any("Sentence" in t for t in texts), texts
    assert con.execute("SELECT id, body FROM docs ORDER BY id").fetchall() == \
        [(1, "Already here."), (2, "A short line."), (7, "A short note about pasta.")]


@pytest.fixture
def reads(monkeypatch):
    """Every document file read (its bytes), in order."""
    from tesseradb.io import documents
    seen: list[str] = []
    real = documents.snapshot

    def snapshot_and_record(path, *args, **kw):
        seen.append(path.rsplit("/", 1)[-1])
        return real(path, *args, **kw)
    monkeypatch.setattr(documents, "snapshot", snapshot_and_record)
    return seen


def test_a_sync_of_the_folder_above_reads_only_the_new_files(tmp_path, spied, reads):
    """The root widens (paths rewritten under the lock); the first pass sees the old root's files as
    already synced, so only the new folder's files are read and embedded, before the lock and under it
    (parsed once: under the lock the same bytes take the first pass's document)."""
    texts, files = spied
    for name, topic in (("a", "backups"), ("b", "certificates")):
        (tmp_path / name).mkdir()
        (tmp_path / name / f"{name}1.md").write_text(f"# {name} one\n\nA note about {topic}.\n")
    con = tesseradb.connect(str(tmp_path / "x.db"), autocommit=True)
    _target(con, "sync", "synced")
    con.execute(f"LOAD DATA INFILE '{tmp_path}/a/*.md' SYNC INTO TABLE synced")
    texts.clear()
    files.clear()
    reads.clear()
    assert con.execute(f"LOAD DATA INFILE '{tmp_path}/*/*.md' SYNC INTO TABLE synced").rowcount == 1
    assert any("1 added, 0 changed, 1 unchanged" in w[2] for w in con.warnings), con.warnings
    assert reads.count("b1.md") == 2, reads     # before the lock, and under it (a1.md: its sha256 compared)
    assert files == ["b1.md"], files            # parsed before the lock; under it the same bytes reuse that
    assert texts and all("certificates" in t or "b one" in t for t in texts), texts
    assert con.execute("SELECT path FROM synced ORDER BY path").fetchall() == [("a/a1.md",), ("b/b1.md",)]
    con.close()
