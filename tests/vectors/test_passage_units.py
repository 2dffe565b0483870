"""passage_units='windows': each chunk's small pieces embedded when the row is, kept in step with the
chunk rows, and used by a text query to choose a found document's passage (docs/passages.md#passage_units).
The real model throughout."""
from __future__ import annotations

import apsw
import numpy as np
import pytest

import tesseradb
from tesseradb.embed import units as embed_units
from tesseradb.embed.registry import get_model

MODEL = "Xenova/all-MiniLM-L6-v2"

# A notes fixture where the chunk nearest to the question (and sharing its words) is not the one that
# answers it: "Restores ... newest snapshot" is nearest; the answer ("retained for fourteen days") sits
# in the middle of a chunk about the backup job.
NOTES = [
    ("Backups", "# Backups\n\nOur backup system copies every database to the archive bucket. Backups matter: without "
     "a backup a lost disk means lost data, so backups are checked by the on-call engineer each week.\n\n"
     "## Operations\n\nThe backup job is scheduled by cron on the storage host and writes its log to "
     "/var/log/backup.log. Snapshots are compressed with zstd before upload. Each snapshot is retained for "
     "fourteen days and then expires. The job sends a metric to the monitoring system when it ends, and a failed "
     "upload is retried three times with a pause between tries. Uploads use the archive credentials of the "
     "service account.\n\n"
     "## Restores\n\nRestores start from the newest snapshot in the archive bucket; the restore script asks for "
     "the snapshot name."),
    ("Certificates", "# Certificates\n\nThe web site renews its certificates automatically. Internal services use "
     "the company authority; request a certificate with the ops form.\n\n## Expiry\n\nAn alert fires thirty days "
     "before a certificate expires."),
]
QUESTION = "how many days are old snapshots kept before they are deleted"
ANSWER = "retained for fourteen days"


def ddl(name: str, units: str = "windows") -> str:
    return (f"CREATE TABLE {name} (title text, body text, chunks float_vector_array knn_type='hnsw' "
            f"model_name='{MODEL}' from='title,body' chunk_strategy='markdown' max_tokens='64' overlap_tokens='8'"
            + (f" passage_units='{units}'" if units else "") + ")")


@pytest.fixture
def db(tmp_path):
    path = str(tmp_path / "notes.db")
    con = tesseradb.connect(path, autocommit=True)
    con.execute(ddl("fine"))
    con.executemany("INSERT INTO fine (id, title, body) VALUES (?, ?, ?)",
                    [(i, t, b) for i, (t, b) in enumerate(NOTES, start=1)])
    yield con, path
    con.close()


def unit_rows(path: str, table: str = "fine") -> dict[int, tuple[int, bytes]]:
    """chunk ordinal (per doc) -> units, read with plain SQLite: {(doc, ord): blob}."""
    raw = apsw.Connection(path, flags=apsw.SQLITE_OPEN_READONLY)
    try:
        chunks = next(r[0] for r in raw.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE ?", (f"_tessera_chunks_{table}_%",)))
        units = "_tessera_units_" + chunks[len("_tessera_chunks_"):]
        if not list(raw.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (units,))):
            return {}
        orphans = list(raw.execute(f'SELECT chunk_id FROM "{units}" WHERE chunk_id NOT IN '
                                   f'(SELECT chunk_id FROM "{chunks}")'))
        assert orphans == [], "units left behind by a deleted chunk"
        return {(doc, ord_): blob for doc, ord_, blob in raw.execute(
            f'SELECT c.doc_id, c.ord, u.units FROM "{chunks}" c JOIN "{units}" u USING (chunk_id)')}
    finally:
        raw.close()


def chunk_count(con, table: str = "fine") -> int:
    return len(con.execute(f"SHOW CHUNKS FROM {table}.chunks").fetchall())


def passage(con, table: str, sql: str = "hybrid") -> tuple[int, str]:
    query = (f"SELECT knn_chunk(), knn_chunk_text() FROM {table} WHERE hybrid_match(?, chunks) LIMIT 1"
             if sql == "hybrid" else f"SELECT knn_chunk(), knn_chunk_text() FROM {table} WHERE knn(chunks, 1, ?)")
    return tuple(con.execute(query, (QUESTION,)).fetchall()[0])


def test_show_create_table_and_describe_name_the_option(db):
    con, _ = db
    assert "chunk_context='heading' passage_units='windows'" in con.execute("SHOW CREATE TABLE fine").fetchall()[0][1]
    column = next(c for c in con.describe("fine").columns if c.name == "chunks")
    assert column.vector.chunking.passage_units == "windows"
    con.execute(ddl("plain", units=""))
    assert "passage_units" not in con.execute("SHOW CREATE TABLE plain").fetchall()[0][1]


@pytest.mark.parametrize("option, message", [
    ("chunk_strategy='markdown' passage_units='words'", "unknown passage_units 'words'; expected none or windows"),
    ("passage_units='windows'", "passage_units='windows' requires a chunk_strategy that cuts a document into "
                                "several chunks (fixed, recursive, sentence or markdown)"),
    ("chunk_strategy='mean' passage_units='windows'", "passage_units='windows' requires a chunk_strategy"),
])
def test_bad_options_are_refused_and_create_nothing(tmp_path, option, message):
    con = tesseradb.connect(str(tmp_path / "bad.db"), autocommit=True)
    with pytest.raises(tesseradb.ProgrammingError) as err:
        con.execute(f"CREATE TABLE t (body text, v float_vector_array knn_type='hnsw' model_name='{MODEL}' "
                    f"from='body' {option})")
    assert err.value.errno == 1064 and err.value.sqlstate == "42000"
    assert message in str(err.value)
    assert con.execute("SHOW TABLES").fetchall() == []


def test_every_chunk_has_the_vectors_of_its_units_after_insert(db):
    con, path = db
    rows = unit_rows(path)
    assert len(rows) == chunk_count(con) > 2
    model = get_model(MODEL)
    raw = apsw.Connection(path, flags=apsw.SQLITE_OPEN_READONLY)
    chunks = next(r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                            "AND name LIKE '_tessera_chunks_fine_%'"))
    doc, ord_, context = next(iter(raw.execute(f'SELECT doc_id, ord, context FROM "{chunks}" WHERE ord = 1')))
    raw.close()
    listed = con.execute("SHOW CHUNKS FROM fine.chunks WHERE id = ?", (doc,)).fetchall()
    text = listed[ord_][5]
    expected = model.embed(embed_units.unit_texts("windows", text, context))
    stored = np.frombuffer(rows[doc, ord_], "<f2").reshape(-1, model.dims).astype(np.float32)
    assert stored.shape == expected.shape and len(stored) > 1
    assert np.allclose(stored, expected, atol=2e-3)      # float16 of the model's vectors
    assert context and context.startswith("Backups")     # read after the chunk's context line


def test_the_units_pick_the_chunk_that_answers_where_the_nearest_chunk_does_not(db):
    con, _ = db
    con.execute(ddl("plain", units="none"))
    con.executemany("INSERT INTO plain (id, title, body) VALUES (?, ?, ?)",
                    [(i, t, b) for i, (t, b) in enumerate(NOTES, start=1)])
    for how in ("hybrid", "knn"):
        chunk, text = passage(con, "plain", how)
        assert ANSWER not in text, "the fixture no longer shows the problem: the plain rule finds the answer"
        chunk, text = passage(con, "fine", how)
        assert ANSWER in text
    # knn_chunks(n) ranks the same way: its first entry is knn_chunk()'s
    best, listed = con.execute("SELECT knn_chunk(), knn_chunks(3) FROM fine WHERE knn(chunks, 1, ?)",
                               (QUESTION,)).fetchall()[0]
    import json
    assert json.loads(listed)[0]["chunk"] == best and ANSWER in json.loads(listed)[0]["text"]
    # a query by vector has no text: the nearest chunk, as before
    vector = get_model(MODEL).embed_query(QUESTION).tolist()
    by_vector = con.execute("SELECT knn_chunk() FROM fine WHERE knn(chunks, 1, ?)", (str(vector),)).fetchall()
    assert by_vector == con.execute("SELECT knn_chunk() FROM plain WHERE knn(chunks, 1, ?)", (str(vector),)).fetchall()


def test_units_follow_update_replace_delete_and_rollback(db):
    con, path = db
    before = unit_rows(path)
    con.execute("UPDATE fine SET body = CONCAT(body, '\n\n## Costs\n\nStorage costs are reviewed monthly.') WHERE id = 2")
    after = unit_rows(path)
    assert len(after) == chunk_count(con)
    assert {k: v for k, v in after.items() if k[0] == 1} == {k: v for k, v in before.items() if k[0] == 1}
    assert {k: v for k, v in after.items() if k[0] == 2} != {k: v for k, v in before.items() if k[0] == 2}
    con.execute("REPLACE INTO fine (id, title, body) VALUES (2, 'Short', 'One line only.')")
    assert len(unit_rows(path)) == chunk_count(con)
    con.execute("DELETE FROM fine WHERE id = 1")
    assert set(k[0] for k in unit_rows(path)) == {2}
    con.execute("BEGIN")
    con.execute("INSERT INTO fine (id, title, body) VALUES (9, 'Later', 'Text written then rolled back.')")
    con.execute("ROLLBACK")
    assert set(k[0] for k in unit_rows(path)) == {2}
    con.execute("BEGIN")
    con.execute("INSERT INTO fine (id, title, body) VALUES (9, 'Later', 'Text written then committed.')")
    con.execute("COMMIT")
    assert set(k[0] for k in unit_rows(path)) == {2, 9}
    con.execute("TRUNCATE TABLE fine")
    assert unit_rows(path) == {}


def test_a_reused_chunk_keeps_its_units_and_the_model_is_not_run_for_them(db):
    con, path = db
    before = unit_rows(path)
    title, body = NOTES[0]
    con.execute("INSERT INTO fine (id, title, body) VALUES (3, ?, ?)", (title, body))
    notes = [w for w in con.execute("SHOW WARNINGS").fetchall() if "reused" in w[2]]
    assert notes and "0 embedded" in notes[0][2]
    after = unit_rows(path)
    for (doc, ord_), blob in before.items():
        if doc == 1:
            assert after[3, ord_] == blob


def test_units_survive_a_restart_and_follow_rebuild_and_modify_column(db):
    con, path = db
    con.close()
    con = tesseradb.connect(path, autocommit=True)
    assert ANSWER in passage(con, "fine")[1]
    before = unit_rows(path)
    con.execute("ALTER TABLE fine REBUILD EMBEDDINGS chunks")
    assert unit_rows(path) == before     # the same texts: the same units, taken from the stored ones
    con.execute(ddl("later", units=""))
    con.executemany("INSERT INTO later (id, title, body) VALUES (?, ?, ?)",
                    [(i, t, b) for i, (t, b) in enumerate(NOTES, start=1)])
    assert unit_rows(path, "later") == {}
    con.execute(f"ALTER TABLE later MODIFY COLUMN chunks float_vector_array knn_type='hnsw' model_name='{MODEL}' "
                "from='title,body' chunk_strategy='markdown' max_tokens='64' overlap_tokens='8' passage_units='windows'")
    assert len(unit_rows(path, "later")) == chunk_count(con, "later")
    assert "passage_units='windows'" in con.execute("SHOW CREATE TABLE later").fetchall()[0][1]
    assert ANSWER in passage(con, "later")[1]
    con.execute(f"ALTER TABLE later MODIFY COLUMN chunks float_vector_array knn_type='hnsw' model_name='{MODEL}' "
                "from='title,body' chunk_strategy='markdown' max_tokens='64' overlap_tokens='8'")
    assert unit_rows(path, "later") == {}
    con.execute("DROP TABLE later")
    raw = apsw.Connection(path, flags=apsw.SQLITE_OPEN_READONLY)
    assert not list(raw.execute("SELECT name FROM sqlite_master WHERE name LIKE '_tessera_units_later%'"))
    raw.close()
    con.close()


def test_a_chunk_without_units_counts_its_own_vector(db):
    """Rows written before the option (or by a shard of vectors) have no units: the rule still runs."""
    con, path = db
    raw = apsw.Connection(path)
    units = next(r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                           "AND name LIKE '_tessera_units_fine_%'"))
    raw.execute(f'DELETE FROM "{units}"')
    raw.close()
    chunk, text = passage(con, "fine")
    assert chunk >= 1 and text


def test_repair_of_a_lost_chunk_table_drops_stale_units_and_rebuild_makes_them_again(db):
    """REPAIR rebuilds chunk rows from the stored vectors (no model run): the old units, keyed by the
    lost table's chunk ids, are dropped; REBUILD EMBEDDINGS makes them again."""
    con, path = db
    con.close()
    raw = apsw.Connection(path)
    chunks = next(r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                            "AND name LIKE '_tessera_chunks_fine_%'"))
    raw.execute(f'DROP TABLE "{chunks}"')
    raw.close()
    con = tesseradb.connect(path, autocommit=True)
    con.execute("REPAIR TABLE fine")
    assert unit_rows(path) == {} and chunk_count(con) > 2
    assert passage(con, "fine")[0] >= 1          # chunks without units: their own vectors count
    con.execute("ALTER TABLE fine REBUILD EMBEDDINGS chunks")
    assert len(unit_rows(path)) == chunk_count(con)           # unit_rows checks that none is orphaned
    assert ANSWER in passage(con, "fine")[1]
    con.close()


def test_progress_reports_the_units_after_the_chunks(tmp_path):
    """The units are a second embedding pass of the statement: the progress callback hears of it (the
    shell's progress line adds it to the chunks'), ending done."""
    con = tesseradb.connect(str(tmp_path / "p.db"), autocommit=True)
    con.execute(ddl("p"))
    seen: list[tuple[int, int]] = []
    con.set_progress(lambda done, total: seen.append((done, total)))
    con.execute("INSERT INTO p (id, title, body) VALUES (1, ?, ?)", NOTES[0])
    chunks = chunk_count(con, "p")
    units = len(unit_rows(str(tmp_path / "p.db"), "p"))
    assert units == chunks
    totals = {total for _, total in seen}
    assert chunks in totals and any(total > chunks for total in totals), seen
    assert max(done for done, total in seen if total == max(totals)) == max(totals)
    con.close()
