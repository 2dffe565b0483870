"""LOAD DATA INFILE 'glob' SYNC INTO TABLE t: the folder's rows follow its files, nothing else is touched."""
from __future__ import annotations

import os

import pytest

import tesseradb

MODEL_TABLE = ("CREATE TABLE d (path string UNIQUE, title text, body text, meta json, rating int, "
               "chunks float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
               "model_name='Xenova/all-MiniLM-L6-v2' from='title,body' chunk_strategy='sentence' max_tokens='32')")
PLAIN_TABLE = "CREATE TABLE d (path string UNIQUE, title text, body text, meta json)"


def sync(cur, pattern, table="d"):
    cur.execute(f"LOAD DATA INFILE ? SYNC INTO TABLE {table}", (str(pattern),))
    return cur.rowcount


def summary(con) -> str:
    notes = [m for level, _, m in con.warnings if m.startswith("LOAD DATA SYNC")]
    assert len(notes) == 1
    return notes[0].split(": ", 1)[1]


def paths(cur, table="d"):
    return [r[0] for r in cur.execute(f"SELECT path FROM {table} ORDER BY path").fetchall()]


def chunk_ids(cur):
    return cur.execute("SHOW CHUNKS FROM d.chunks ORDER BY id").fetchall()


@pytest.fixture
def folder(tmp_path):
    root = tmp_path / "vault"
    (root / "ops").mkdir(parents=True)
    (root / "backups.md").write_text("---\ntitle: Backups\ntags: [ops]\n---\nBackups run nightly. "
                                     "Snapshots are kept for a week.\n")
    (root / "ops" / "tls.md").write_text("# Certificates\n\nRotate the certificate every year. "
                                         "Restart the standby first.\n")
    (root / "ops" / "dns.txt").write_text("The resolver caches answers for five minutes.\n")
    return root


def test_sync_needs_a_unique_path_column(cur, folder):
    cur.execute("CREATE TABLE d (path string, body text)")
    with pytest.raises(tesseradb.ProgrammingError, match="SYNC needs a unique column 'path' in table 'd'"):
        sync(cur, folder / "**" / "*")


def test_first_sync_adds_and_a_second_touches_nothing(con, folder):
    cur = con.cursor()
    cur.execute(MODEL_TABLE)
    assert sync(cur, folder / "**" / "*") == 3
    assert summary(con) == "3 added, 0 changed, 0 unchanged, 0 removed, 0 skipped"
    cur.execute("UPDATE d SET rating = 5 WHERE path = 'backups.md'")   # a column the files do not fill
    before = (cur.execute("SELECT id, path, title, body, meta, rating FROM d ORDER BY id").fetchall(),
              chunk_ids(cur))
    assert sync(cur, folder / "**" / "*") == 0
    assert summary(con) == "0 added, 0 changed, 3 unchanged, 0 removed, 0 skipped"
    assert (cur.execute("SELECT id, path, title, body, meta, rating FROM d ORDER BY id").fetchall(),
            chunk_ids(cur)) == before


def test_edits_deletions_renames_and_additions(con, folder):
    cur = con.cursor()
    cur.execute(MODEL_TABLE)
    sync(cur, folder / "**" / "*")
    ids = dict(cur.execute("SELECT path, id FROM d").fetchall())
    with open(folder / "backups.md", "a") as f:
        f.write("Monthly snapshots go to cold storage.\n")
    os.remove(folder / "ops" / "dns.txt")
    os.rename(folder / "ops" / "tls.md", folder / "ops" / "certificates.md")
    (folder / "new.md").write_text("# New page\n\nFresh text about queues.\n")
    assert sync(cur, folder / "**" / "*") == 5      # 1 changed, 2 added, 2 removed
    assert summary(con) == "2 added, 1 changed, 0 unchanged, 2 removed, 0 skipped"
    reuse = [m for _, _, m in con.warnings if "reused stored vectors" in m]
    assert paths(cur) == ["backups.md", "new.md", "ops/certificates.md"]
    assert cur.execute("SELECT id, body FROM d WHERE path = 'backups.md'").fetchone() == \
        (ids["backups.md"], "Backups run nightly. Snapshots are kept for a week.\nMonthly snapshots go to "
                            "cold storage.\n")
    # the renamed page's chunk is reused; the edited page's new text and the new page are embedded
    assert reuse == ["column 'chunks': 1 of 3 chunks reused stored vectors (same model, same text); 2 embedded"]
    assert cur.execute("SELECT path FROM d WHERE knn(chunks, 1, 'rotate the certificate')").fetchall() == \
        [("ops/certificates.md",)]


def test_the_synced_table_equals_a_fresh_sync(tmp_path, folder):
    edited = tesseradb.connect(str(tmp_path / "edited.db"))
    cur = edited.cursor()
    cur.execute(PLAIN_TABLE)
    sync(cur, folder / "**" / "*")
    (folder / "ops" / "tls.md").write_text("# Certificates\n\nNow rotated every six months.\n")
    os.remove(folder / "backups.md")
    (folder / "ops" / "more.md").write_text("---\nowner: bo\n---\nMore.\n")
    sync(cur, folder / "**" / "*")
    fresh = tesseradb.connect(str(tmp_path / "fresh.db"))
    fresh.cursor().execute(PLAIN_TABLE)
    sync(fresh.cursor(), folder / "**" / "*")
    query = "SELECT path, title, body, meta FROM d ORDER BY path"
    assert cur.execute(query).fetchall() == fresh.cursor().execute(query).fetchall()


def test_an_unrelated_folder_is_refused_naming_the_root_and_a_folder_above_widens_it(con, tmp_path):
    # issue 32: a table synced from files has one root; a sibling folder would give a second set of paths
    cur = con.cursor()
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / f"{name}1.md").write_text(f"{name} one\n")
        (tmp_path / name / f"{name}2.md").write_text(f"{name} two\n")
    cur.execute(PLAIN_TABLE)
    sync(cur, tmp_path / "a" / "*.md")
    with pytest.raises(tesseradb.ProgrammingError) as info:
        sync(cur, tmp_path / "b" / "*.md")
    assert info.value.msg.startswith(f"LOAD DATA SYNC: table 'd' holds the files of '{tmp_path / 'a'}' (its root); "
                                     f"'{tmp_path / 'b'}' is neither inside it nor above it")
    assert paths(cur) == ["a1.md", "a2.md"]
    ids = dict(cur.execute("SELECT path, id FROM d").fetchall())
    sync(cur, tmp_path / "**" / "*.md")             # the folder above: paths rewritten, nothing read again
    assert summary(con) == "2 added, 0 changed, 2 unchanged, 0 removed, 0 skipped"
    assert paths(cur) == ["a/a1.md", "a/a2.md", "b/b1.md", "b/b2.md"]
    assert {p: i for p, i in cur.execute("SELECT path, id FROM d").fetchall() if p.startswith("a/")} == \
        {"a/" + p: i for p, i in ids.items()}
    os.remove(tmp_path / "a" / "a2.md")
    sync(cur, tmp_path / "a" / "*.md")              # a folder inside the root: its rows only
    assert summary(con) == "0 added, 0 changed, 1 unchanged, 1 removed, 0 skipped"
    assert paths(cur) == ["a/a1.md", "b/b1.md", "b/b2.md"]


def test_rows_from_other_statements_are_never_touched(cur, folder):
    cur.execute(PLAIN_TABLE)
    cur.execute("INSERT INTO d (path, title) VALUES ('typed-in.md', 'by hand')")
    sync(cur, folder / "**" / "*")
    sync(cur, folder / "**" / "*")
    assert cur.execute("SELECT title FROM d WHERE path = 'typed-in.md'").fetchall() == [("by hand",)]
    cur.execute("INSERT INTO d (path, title) VALUES ('ops/new.md', 'mine')")
    (folder / "ops" / "new.md").write_text("the file\n")
    with pytest.raises(tesseradb.IntegrityError, match=r"gives path 'ops/new\.md', which row \d+ already has"):
        sync(cur, folder / "**" / "*")


def test_a_glob_only_removes_rows_it_would_match(con, folder):
    cur = con.cursor()
    cur.execute(PLAIN_TABLE)
    sync(cur, folder / "**" / "*.md")
    sync(cur, folder / "**" / "*.txt")      # same folder, other files: the .md rows stay
    assert paths(cur) == ["backups.md", "ops/dns.txt", "ops/tls.md"]
    os.remove(folder / "ops" / "tls.md")
    sync(cur, folder / "**" / "*.txt")
    assert paths(cur) == ["backups.md", "ops/dns.txt", "ops/tls.md"]
    sync(cur, folder / "**" / "*")
    assert summary(con) == "0 added, 0 changed, 2 unchanged, 1 removed, 0 skipped"
    assert paths(cur) == ["backups.md", "ops/dns.txt"]


def test_a_missing_folder_is_an_error_not_an_empty_one(con, folder, tmp_path):
    cur = con.cursor()
    cur.execute(PLAIN_TABLE)
    sync(cur, folder / "**" / "*")
    with pytest.raises(tesseradb.OperationalError, match="Directory '.*not-there' not found") as info:
        sync(cur, tmp_path / "not-there" / "**" / "*")
    assert info.value.errno == 29
    for f in [folder / "backups.md", folder / "ops" / "tls.md", folder / "ops" / "dns.txt"]:
        os.remove(f)
    sync(cur, folder / "**" / "*")           # the folder exists and is empty: its rows go
    assert summary(con) == "0 added, 0 changed, 0 unchanged, 3 removed, 0 skipped"
    assert paths(cur) == []


def test_a_file_that_turns_unreadable_is_skipped_and_keeps_its_row(con, folder):
    cur = con.cursor()
    cur.execute(PLAIN_TABLE)
    sync(cur, folder / "**" / "*")
    (folder / "backups.md").write_bytes(b"\xff\xfe\x00broken")
    sync(cur, folder / "**" / "*")
    assert summary(con) == "0 added, 0 changed, 2 unchanged, 0 removed, 1 skipped"
    assert any(level == "Warning" and "backups.md' skipped" in m for level, _, m in con.warnings)
    assert cur.execute("SELECT title FROM d WHERE path = 'backups.md'").fetchone() == ("Backups",)


def test_an_interrupted_sync_changes_nothing(tmp_path, folder):
    con = tesseradb.connect(str(tmp_path / "t.db"))
    cur = con.cursor()
    cur.execute(MODEL_TABLE)
    sync(cur, folder / "**" / "*")
    before = cur.execute("SELECT id, path, body FROM d ORDER BY id").fetchall()
    (folder / "backups.md").write_text("Entirely new text about archives. " * 40)
    for n in range(5):
        (folder / f"extra{n}.md").write_text(f"Page {n} talks about queue number {n}. " * 20)
    os.remove(folder / "ops" / "dns.txt")
    con.set_progress(lambda done, total: con.interrupt())
    with pytest.raises(tesseradb.OperationalError, match="interrupted") as info:
        sync(cur, folder / "**" / "*")
    assert info.value.errno == 1317
    con.set_progress(None)
    assert cur.execute("SELECT id, path, body FROM d ORDER BY id").fetchall() == before
    sync(cur, folder / "**" / "*")           # the bookkeeping was rolled back with the rows
    assert summary(con) == "5 added, 1 changed, 1 unchanged, 1 removed, 0 skipped"


def test_a_file_changed_during_a_sync_is_stored_as_read_and_synced_next_time(con, folder):
    cur = con.cursor()
    cur.execute(MODEL_TABLE)
    target = folder / "backups.md"
    original = target.read_text()

    def edit_once(done, total):
        # The statement's own run: it holds its transaction, and it embeds a batch after reading every
        # file of it (before the lock, a first pass reads and embeds them too: not edited then).
        if con.in_transaction and target.read_text() == original:
            target.write_text("---\ntitle: Backups\n---\nRewritten while the sync ran.\n")
    con.set_progress(edit_once)
    sync(cur, folder / "**" / "*")
    con.set_progress(None)
    assert target.read_text() != original
    assert cur.execute("SELECT body FROM d WHERE path = 'backups.md'").fetchone() == \
        ("Backups run nightly. Snapshots are kept for a week.\n",)
    sync(cur, folder / "**" / "*")
    assert summary(con) == "0 added, 1 changed, 2 unchanged, 0 removed, 0 skipped"
    assert cur.execute("SELECT body FROM d WHERE path = 'backups.md'").fetchone() == \
        ("Rewritten while the sync ran.\n",)


def test_a_file_changed_after_the_first_pass_read_it_is_stored_as_the_statement_reads_it(con, folder, tmp_path):
    """Before the lock a first pass reads the new and changed files and embeds them; an edit landing
    then is what the statement reads under the lock, stores and embeds (none of the first pass's
    vectors of the old text): the same rows and vectors as a SYNC of the edited folder."""
    cur = con.cursor()
    cur.execute(MODEL_TABLE)
    target = folder / "backups.md"
    rewritten = "---\ntitle: Backups\n---\nRewritten before the sync took the lock. Archives move weekly.\n"
    passes = []

    def edit_in_first_pass(done, total):
        passes.append(con.in_transaction)
        if not con.in_transaction and target.read_text() != rewritten:
            target.write_text(rewritten)
    con.set_progress(edit_in_first_pass)
    sync(cur, folder / "**" / "*")
    con.set_progress(None)
    assert passes[0] is False and passes[-1] is True        # the first pass ran, then the statement
    rows = cur.execute("SELECT path, body, chunks FROM d ORDER BY path").fetchall()
    assert rows[0][:2] == ("backups.md", "Rewritten before the sync took the lock. Archives move weekly.\n")
    sync(cur, folder / "**" / "*")
    assert summary(con) == "0 added, 0 changed, 3 unchanged, 0 removed, 0 skipped"   # stored as read
    fresh = tesseradb.connect(str(tmp_path / "fresh.db"))
    fresh_cur = fresh.cursor()
    fresh_cur.execute(MODEL_TABLE)
    fresh_cur.execute("BEGIN")                      # no first pass: all of it embedded under the lock
    sync(fresh_cur, folder / "**" / "*")
    fresh_cur.execute("COMMIT")
    assert fresh_cur.execute("SELECT path, body, chunks FROM d ORDER BY path").fetchall() == rows
    assert fresh_cur.execute("SHOW CHUNKS FROM d.chunks ORDER BY id").fetchall() == chunk_ids(cur)
    fresh.close()


def test_rows_deleted_by_hand_come_back_and_drop_table_forgets(con, folder):
    cur = con.cursor()
    cur.execute(PLAIN_TABLE)
    sync(cur, folder / "**" / "*")
    cur.execute("DELETE FROM d WHERE path = 'backups.md'")
    sync(cur, folder / "**" / "*")
    assert summary(con) == "1 added, 0 changed, 2 unchanged, 0 removed, 0 skipped"
    cur.execute("DROP TABLE d")
    cur.execute(PLAIN_TABLE)
    sync(cur, folder / "**" / "*")
    assert summary(con) == "3 added, 0 changed, 0 unchanged, 0 removed, 0 skipped"
