"""Full-text search through the DB-API: the index follows every write path (LOAD DATA, transactions,
chunk rows of model columns), a database from before full-text search gets its index on open,
CHECK/REPAIR TABLE, hybrid_match() with the real model, and any user text gives rows or a clean error."""
from __future__ import annotations

import logging
import pathlib

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tesseradb

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "sql_examples" / "data"
MODEL = "model_name='Xenova/all-MiniLM-L6-v2' from='title,body'"
NOTES = [
    ("Signals", "Send SIGUSR1 to the daemon and it reopens its log files; this is how log rotation works."),
    ("Backups", "The backup job copies the data volume to the standby host every night."),
    ("Cats", "Cats are small furry animals that sleep most of the day."),
    ("Replication", "The replication certificate expires every year; install the new one on both hosts."),
]


def ids(cur, sql, params=()):
    return [r[0] for r in cur.execute(sql, params).fetchall()]


@pytest.fixture
def notes(cur):
    cur.execute(f"CREATE TABLE notes (title text, body text, "
                f"v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' {MODEL} "
                "chunk_strategy='recursive' max_tokens='12' overlap_tokens='2')")
    cur.executemany("INSERT INTO notes (title, body) VALUES (?, ?)", NOTES)
    return cur


def test_load_data_indexes_every_row(cur):
    cur.execute("CREATE TABLE n (title text, body text, tags json, created timestamp)")
    cur.execute(f"LOAD DATA INFILE '{EXAMPLES / 'notes.csv'}' INTO TABLE n")
    assert ids(cur, "SELECT id FROM n WHERE MATCH('snapshot') ORDER BY id") == [1, 2]
    assert cur.execute("CHECK TABLE n").fetchall()[-1][2:] == ("status", "OK")


def test_a_transaction_sees_its_own_writes_and_rollback_undoes_them(con, cur):
    cur.execute("CREATE TABLE t (body text)")
    con.commit()
    cur.execute("INSERT INTO t (body) VALUES ('uncommitted words')")
    assert ids(cur, "SELECT id FROM t WHERE MATCH('uncommitted')") == [1]
    con.rollback()
    assert ids(cur, "SELECT id FROM t WHERE MATCH('uncommitted')") == []
    assert cur.execute("CHECK TABLE t").fetchall()[-1][2:] == ("status", "OK")


def test_a_failed_statement_leaves_the_index_unchanged(cur):
    cur.execute("CREATE TABLE t (body text)")
    cur.execute("INSERT INTO t (id, body) VALUES (1, 'first')")
    with pytest.raises(tesseradb.IntegrityError):
        cur.execute("INSERT INTO t (id, body) VALUES (2, 'second'), (1, 'duplicate')")
    assert ids(cur, "SELECT id FROM t WHERE MATCH('second | duplicate')") == []
    assert cur.execute("CHECK TABLE t").fetchall()[-1][2:] == ("status", "OK")


def test_query_text_is_a_parameter(cur):
    cur.execute("CREATE TABLE t (body text)")
    cur.executemany("INSERT INTO t (body) VALUES (?)", [("it's \"quoted\" text",), ("plain text",)])
    assert ids(cur, "SELECT id FROM t WHERE MATCH(?) ORDER BY id", ('"quoted text"',)) == [1]
    assert ids(cur, "SELECT id FROM t WHERE MATCH(?) ORDER BY id", ("it's",)) == [1]
    row = cur.execute("SELECT SNIPPET(body, ?) FROM t WHERE id = 2", ("plain",)).fetchone()
    assert row == ("<b>plain</b> text",)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=60) | st.lists(st.sampled_from(['a', 'b', '-', '!', '|', '"', '(', ')', '@body', '@x', '*', '~2',
                                                         'NEAR/2', 'MAYBE', '\\', '\x00', 'C++', ' ']), max_size=20).map(" ".join))
def test_any_text_gives_rows_or_a_clean_error(cur, text):
    cur.execute("CREATE TABLE IF NOT EXISTS f (body text)")
    if not ids(cur, "SELECT id FROM f LIMIT 1"):
        cur.execute("INSERT INTO f (body) VALUES ('a b c'), ('b c d')")
    try:
        cur.execute("SELECT id, weight() FROM f WHERE MATCH(?)", (text,)).fetchall()
    except tesseradb.ProgrammingError as exc:      # a syntax error (1064) or a not-supported operator
        assert exc.errno in (1064, 1235), exc


def test_ten_thousand_words_and_nul(cur):
    cur.execute("CREATE TABLE t (body text)")
    cur.execute("INSERT INTO t (body) VALUES ('w1 w2 w3')")
    assert ids(cur, "SELECT id FROM t WHERE MATCH(?)", (" | ".join(f"w{i}" for i in range(10_000)),)) == [1]
    assert ids(cur, "SELECT id FROM t WHERE MATCH(?)", (" ".join(f"w{i}" for i in range(10_000)),)) == []
    assert ids(cur, "SELECT id FROM t WHERE MATCH(?)", ("w1\x00w2",)) == [1]


# -- a database from before full-text search; CHECK and REPAIR ----------------------------------------
def _strip_fulltext(path: str) -> None:
    """What the previous release wrote: the same tables, no FTS5 tables or triggers."""
    conn = apsw.Connection(path)
    names = [r for r in conn.execute("SELECT type, name FROM sqlite_master WHERE name LIKE '\\_tessera\\_fts%' "
                                     "ESCAPE '\\' AND type IN ('table', 'trigger') AND sql LIKE 'CREATE %'")]
    for kind, name in sorted(names, key=lambda n: n[0] != "trigger"):
        conn.execute(f'DROP {kind.upper()} IF EXISTS "{name}"')
    conn.close()


def test_an_older_database_gets_its_index_once_on_open(db_path, caplog):
    con = tesseradb.connect(db_path)
    cur = con.cursor()
    cur.execute(f"CREATE TABLE notes (title text, body text, v float_vector_array knn_type='hnsw' "
                f"hnsw_similarity='cosine' {MODEL} chunk_strategy='recursive' max_tokens='12' overlap_tokens='2')")
    cur.executemany("INSERT INTO notes (title, body) VALUES (?, ?)", NOTES)
    con.commit()
    con.close()
    _strip_fulltext(db_path)
    with caplog.at_level(logging.INFO, logger="tesseradb.fulltext"):
        con = tesseradb.connect(db_path)
    assert any("building the full-text index" in r.message for r in caplog.records)
    assert any(" of " in r.message and "full-text index" in r.message for r in caplog.records)   # progress
    cur = con.cursor()
    assert ids(cur, "SELECT id FROM notes WHERE MATCH('SIGUSR1')") == [1]
    assert cur.execute("SELECT weight() IS NOT NULL FROM notes WHERE hybrid_match('certificate')").fetchone() == (1,)
    assert cur.execute("CHECK TABLE notes").fetchall()[-1][2:] == ("status", "OK")
    con.close()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="tesseradb.fulltext"):
        tesseradb.connect(db_path).close()
    assert not any("building" in r.message for r in caplog.records)       # once


def test_check_finds_a_stale_index_and_repair_rebuilds_it(db_path):
    con = tesseradb.connect(db_path)
    con.cursor().execute("CREATE TABLE t (body text)")
    con.cursor().execute("INSERT INTO t (body) VALUES ('indexed words')")
    con.commit()
    con.close()
    raw = apsw.Connection(db_path)                 # a writer that bypasses the engine's triggers
    raw.execute('DROP TRIGGER "_tessera_fts_t_ai"')
    raw.execute("INSERT INTO t (id, body) VALUES (2, 'sneaked in')")
    raw.close()
    con = tesseradb.connect(db_path)
    cur = con.cursor()
    report = cur.execute("CHECK TABLE t").fetchall()
    assert report[-1][2:] == ("error", "Corrupt")
    assert any("trigger" in r[3] for r in report) and any("does not match the rows" in r[3] for r in report)
    report = cur.execute("REPAIR TABLE t").fetchall()
    assert report[-1][2:] == ("status", "OK")
    assert ids(cur, "SELECT id FROM t WHERE MATCH('sneaked')") == [2]
    cur.execute("INSERT INTO t (body) VALUES ('after repair')")
    assert ids(cur, "SELECT id FROM t WHERE MATCH('repair')") == [3]
    assert cur.execute("CHECK TABLE t").fetchall()[-1][2:] == ("status", "OK")
    con.close()


# -- chunk level and hybrid_match with the real model --------------------------------------------------
def test_hybrid_match_finds_the_rare_keyword_first(notes):
    rows = notes.execute("SELECT id, weight(), knn_dist(), hybrid_score() FROM notes "
                         "WHERE hybrid_match('SIGUSR1')").fetchall()
    assert rows[0][0] == 1 and rows[0][1] is not None
    assert [r[3] for r in rows] == sorted((r[3] for r in rows), reverse=True)
    assert all(r[1] is None for r in rows[1:])     # only one note has the word: NULL for the others


def test_hybrid_match_filters_every_side_and_limits(notes):
    rows = notes.execute("SELECT id FROM notes WHERE hybrid_match('log rotation', v, {k=2}) AND id > 1").fetchall()
    assert 1 not in [r[0] for r in rows]
    assert len(notes.execute("SELECT id FROM notes WHERE hybrid_match('log rotation') LIMIT 2").fetchall()) == 2


def test_the_chunk_index_follows_updates_and_deletes(notes):
    def text_side(word):
        return [r[0] for r in notes.execute("SELECT id, weight() FROM notes WHERE hybrid_match(?)", (word,))
                if r[1] is not None]
    assert text_side("furry") == [3]
    notes.execute("UPDATE notes SET body = 'Cats are quiet.' WHERE id = 3")
    assert text_side("furry") == []
    assert text_side("quiet") == [3]
    notes.execute("DELETE FROM notes WHERE id = 3")
    assert text_side("quiet") == []
    assert notes.execute("CHECK TABLE notes").fetchall()[-1][2:] == ("status", "OK")


def test_highlight_in_a_hybrid_query(notes):
    row = notes.execute("SELECT HIGHLIGHT({limit=0}, 'body') FROM notes WHERE hybrid_match('certificate') "
                        "LIMIT 1").fetchone()
    assert "<b>certificate</b>" in row[0]


@pytest.mark.parametrize("typed, expected", [
    ("SELECT id FROM t WHERE hybrid_m", "hybrid_match"), ("SELECT HIGHL", "HIGHLIGHT"), ("SELECT snip", "snippet"),
    ("SELECT hybrid_sc", "hybrid_score"), ("SELECT 1 OPTION fusion_m", "fusion_method"),
    ("SELECT 1 OPTION field_w", "field_weights"), ("CREATE TABLE t (b text) morph", "morphology"),
    ("SELECT MATCH(b) AGA", "AGAINST"),
])
def test_the_shell_completes_the_new_words(typed, expected):
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from tesseradb.clients.shell.complete import SqlCompleter
    offered = [c.text for c in SqlCompleter().get_completions(Document(typed), CompleteEvent())]
    assert expected in offered


def test_a_repeated_hybrid_statement_uses_each_executes_parameters(cur):
    cur.execute("CREATE TABLE h (title text, v float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')")
    cur.execute("INSERT INTO h (id, title, v) VALUES (1, 'red apple', (0,0)), (2, 'green apple', (1,0)), "
                "(3, 'red car', (2,0)), (4, 'blue car', (3,0))")
    sql = ("SELECT id, weight() IS NOT NULL, knn_dist() FROM h WHERE MATCH(?) AS t AND knn(v, 2, ?) AS d "
           "LIMIT ? OPTION fusion_method='rrf'")
    # text side: red -> 1, 3; knn side from (0,0): 1, 2  => 1 first (both sides)
    assert cur.execute(sql, ("red", [0.0, 0.0], 2)).fetchall()[0] == (1, 1, 0.0)
    # the same statement again (its plan is reused): blue -> 4; knn from (3,0), window LIMIT 3: 4, 3, 2
    rows = cur.execute(sql, ("blue", [3.0, 0.0], 3)).fetchall()
    assert rows[0] == (4, 1, 0.0) and [r[0] for r in rows] == [4, 3, 2]
    assert cur.execute(sql, ("apple", [0.0, 0.0], 1)).fetchall() == [(1, 1, 0.0)]


def test_a_repeated_hybrid_match_runs_its_text_side_with_each_executes_filter(notes):
    sql = "SELECT id, weight() FROM notes WHERE hybrid_match(?, v) AND id <> ? LIMIT 4"
    for word, excluded, found in [("SIGUSR1", 2, 1), ("furry", 1, 3), ("certificate", 3, 4), ("SIGUSR1", 1, None)]:
        rows = notes.execute(sql, (word, excluded)).fetchall()
        assert excluded not in [r[0] for r in rows]
        assert [r[0] for r in rows if r[1] is not None] == ([found] if found else [])
