"""A LOAD DATA of documents reads and cuts its next documents while the model embeds its first pass
(sql/statements/embed_first_load.py, ReadAhead): each text is cut once, the documents after the
first pass's on the read-ahead thread, and the load stores the same rows, chunks, vectors and
warnings as the same load embedded under the lock (inside BEGIN: no first pass)."""
from __future__ import annotations

import threading

import pytest

import tesseradb
from tesseradb.embed import rows
from tesseradb.sql.statements import embed_first_load

DDL = ("CREATE TABLE {t} (path string, title text, body text, v float_vector_array knn_type='hnsw' "
       "hnsw_similarity='cosine' model_name='Xenova/all-MiniLM-L6-v2' from='title,body' "
       "chunk_strategy='recursive' max_tokens='32' overlap_tokens='4' chunk_context='heading')")
TOPICS = ["Backups", "Restores", "Snapshots", "Replication", "Indexes", "Pasta"]


@pytest.fixture
def notes(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    for n, topic in enumerate(TOPICS):
        sections = "\n\n".join(f"## {topic} part {k}\n\n" + " ".join(
            f"Sentence {i} of part {k} says how {topic.lower()} behave on day {n}." for i in range(12))
            for k in range(3))
        (folder / f"{n}.md").write_text(f"# {topic}\n\n{sections}\n")
    (folder / "6.md").write_bytes(b"# Caf\xe9\n\nLatin-1 bytes are read with a Warning.\n")
    return folder


@pytest.fixture
def cuts(monkeypatch):
    """(thread name, text's first line) of every text cut."""
    seen: list[tuple[str, str]] = []
    real = rows.cut_text

    def cut_and_record(model, spec, text, title=None):
        seen.append((threading.current_thread().name, text.splitlines()[0] if text else ""))
        return real(model, spec, text, title)
    monkeypatch.setattr(rows, "cut_text", cut_and_record)
    return seen


def _load(con, table: str, folder, bracket: bool):
    con.execute(DDL.format(t=table))
    if bracket:
        con.execute("BEGIN")
    count = con.execute(f"LOAD DATA INFILE '{folder}/*.md' INTO TABLE {table}").rowcount
    warnings = [w[1:] for w in con.warnings]
    if bracket:
        con.execute("COMMIT")
    stored = con.execute(f"SELECT id, path, title, body, v FROM {table} ORDER BY id").fetchall()
    chunks = [con.execute(f"SHOW CHUNKS FROM {table}.v WHERE id = {r[0]}").fetchall() for r in stored]
    return count, warnings, [r[1:] for r in stored], chunks


@pytest.mark.parametrize("setting", ["BUDGET_CHARS", "HEAD_CHARS"])
def test_documents_after_the_first_are_cut_once_ahead_and_stored_as_under_the_lock(
        tmp_path, notes, cuts, monkeypatch, setting):
    """BUDGET_CHARS=1: the first pass takes the first file only, the read-ahead cuts the next files.
    HEAD_CHARS=1: the first pass takes them all, the model starts on the first while the read-ahead
    cuts the others (the first pass's rest), then embeds those."""
    monkeypatch.setattr(embed_first_load, setting, 1)
    runs = []
    for name, bracket in (("ahead", False), ("locked", True)):      # one database each: no chunk reuse
        cuts.clear()
        con = tesseradb.connect(str(tmp_path / f"{name}.db"), autocommit=True)
        runs.append(_load(con, "t", notes, bracket))
        con.close()
        if not bracket:
            ahead_cuts = list(cuts)
    first, locked = runs
    assert first[0] == 7
    assert first == locked
    assert [code for code, _ in first[1]] == [1366, 1000], first[1]     # 6.md read as cp1252, said once
    assert len(ahead_cuts) == len(cuts) == 7                     # each text cut once
    assert [name for name, _ in ahead_cuts].count("tessera-read-ahead") == 6
    assert not any(name == "tessera-read-ahead" for name, _ in cuts)


def test_a_read_ahead_stops_when_the_first_pass_fails(tmp_path, notes, cuts, monkeypatch):
    """A model that fails in the first pass: the statement fails as before, and the read-ahead has
    stopped before it returns (no thread left cutting)."""
    from tesseradb import embed
    monkeypatch.setattr(embed_first_load, "BUDGET_CHARS", 1)
    model = embed.get_model("Xenova/all-MiniLM-L6-v2")
    real = model.embed

    def failing(texts, **kw):
        raise RuntimeError("the model broke")
    con = tesseradb.connect(str(tmp_path / "x.db"), autocommit=True)
    con.execute(DDL.format(t="t"))
    monkeypatch.setattr(model, "embed", failing)
    with pytest.raises(Exception):
        con.execute(f"LOAD DATA INFILE '{notes}/*.md' INTO TABLE t")
    monkeypatch.setattr(model, "embed", real)
    assert not any(t.name == "tessera-read-ahead" for t in threading.enumerate())
    assert con.execute("SELECT COUNT(*) FROM t").fetchone() == (0,)
    con.close()


@pytest.fixture
def parses(monkeypatch):
    """The file name of every document parse."""
    from tesseradb.io import documents
    seen: list[str] = []
    real = documents.parse

    def parse_and_record(path, *args, **kw):
        seen.append(path.rsplit("/", 1)[-1])
        return real(path, *args, **kw)
    monkeypatch.setattr(documents, "parse", parse_and_record)
    return seen


@pytest.mark.parametrize("setting", ["BUDGET_CHARS", "HEAD_CHARS"])
def test_each_document_is_parsed_once_when_its_file_did_not_change(tmp_path, notes, parses, monkeypatch, setting):
    """The first pass (and its read-ahead) parses the files it reads; under the lock the statement reads
    them again and takes the parsed documents of the same bytes: one parse per file, the same rows as a
    load under the lock alone (tested above), the cp1252 file's Warning said once."""
    monkeypatch.setattr(embed_first_load, setting, 1)
    con = tesseradb.connect(str(tmp_path / "x.db"), autocommit=True)
    count, warnings, stored, _ = _load(con, "t", notes, bracket=False)
    con.close()
    assert count == 7
    assert sorted(parses) == sorted(f"{n}.md" for n in range(7))
    assert [code for code, _ in warnings] == [1366, 1000], warnings
    assert stored[6][1:3] == ("Café", "# Café\n\nLatin-1 bytes are read with a Warning.\n")


def test_a_document_changed_after_the_first_pass_is_stored_as_the_statement_reads_it(tmp_path, notes, parses):
    """A file rewritten between the first pass and the lock: the statement parses what it reads then
    and stores that (the first pass's document of the old bytes is not used)."""
    con = tesseradb.connect(str(tmp_path / "x.db"), autocommit=True)
    con.execute(DDL.format(t="t"))
    target = notes / "0.md"
    rewritten = "# Backups, rewritten\n\nWritten again after the first pass read the folder.\n"

    def edit_in_first_pass(done, total):
        if not con.in_transaction and target.read_text() != rewritten:
            target.write_text(rewritten)
    con.set_progress(edit_in_first_pass)
    assert con.execute(f"LOAD DATA INFILE '{notes}/*.md' INTO TABLE t").rowcount == 7
    con.set_progress(None)
    assert parses.count("0.md") == 2
    assert con.execute("SELECT title, body FROM t WHERE path = '0.md'").fetchone() == \
        ("Backups, rewritten", rewritten)
    con.close()
