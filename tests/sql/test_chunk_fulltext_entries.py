"""The chunk-level full-text index gets its entries from the rows' writer (storage/chunk_table.py
``write_chunks``, from the texts it holds) instead of a trigger that cut every chunk's span out of its
document in SQL: the entries are exactly what the trigger indexed, for every kind of text; a chunk
the writer cannot cut (a value SQLite holds otherwise than the writer got it) is still indexed by the
trigger; a file of the previous release (its trigger indexed every new chunk row) gets the new
trigger once on open, without a rebuild, and is never indexed twice while it still has the old one."""
from __future__ import annotations

import logging

import apsw
import pytest

import tesseradb
from tesseradb.storage.fulltext import ChunkTextIndex

MODEL = "model_name='Xenova/all-MiniLM-L6-v2'"
TOKENIZE = "porter unicode61 tokenchars ''_''"
BODIES = [
    "# Café déjà vu\n\nNaïve résumé of the crème brûlée: ünïcödé, accents and façades. " * 6,
    "## 東京の設定\n\n日本語のテキストとEnglish words mixed、句読点も。Ünter the 🚀 rocket emoji 🚀 lives. " * 5,
    "Plain words, punctuation!? (parentheses) [brackets] {braces} -- dashes; semi:colons. snake_case_names ok " * 8,
    "",
    "Supercalifragilisticexpialidocious antidisestablishmentarianism pneumonoultramicroscopic " * 9,
]


def _make(cur, name: str, strategy: str) -> None:
    cur.execute(f"CREATE TABLE {name} (title string, body text, v float_vector_array knn_type='hnsw' "
                f"hnsw_similarity='cosine' {MODEL} from='title,body' chunk_strategy='{strategy}' "
                "max_tokens='24' overlap_tokens='4')")


def _names(raw: apsw.Connection, table: str) -> tuple[str, str]:
    """(chunk table, chunk index) of the table's column v, found by the index's insert trigger."""
    chunks, trigger = raw.execute("SELECT tbl_name, name FROM sqlite_master WHERE type = 'trigger' AND name LIKE ? "
                                  "ESCAPE '\\'", (f"\\_tessera\\_ftsc\\_{table}\\_v\\_%\\_ai",)).fetchone()
    return chunks, trigger[:-len("_ai")]


def _entries(raw: apsw.Connection, table: str, separator: str) -> tuple[list, list]:
    """(what the table's chunk index holds, what the previous release's trigger SQL indexes for the same
    chunk rows), each as (doc_id, ord, field, term, offset) rows, sorted (an entry twice is there twice)."""
    chunks, index = _names(raw, table)
    source = f"COALESCE(CAST(r.title AS TEXT), '') || {separator} || COALESCE(CAST(r.body AS TEXT), '')"
    raw.execute("DROP TABLE IF EXISTS temp.ref")
    raw.execute(f"CREATE VIRTUAL TABLE temp.ref USING fts5(heading, body, content='', tokenize='{TOKENIZE}')")
    raw.execute(f'INSERT INTO temp.ref (rowid, heading, body) SELECT k.chunk_id, COALESCE(k.context, k.heading, \'\'), '
                f'substr({source}, k.start + 1, k."end" - k.start) FROM "{chunks}" k JOIN "{table}" r ON r.id = k.doc_id '
                'WHERE k.start IS NOT NULL')
    out = []
    for schema, name in (("main", index), ("temp", "ref")):
        raw.execute(f"DROP TABLE IF EXISTS temp.vocab; CREATE VIRTUAL TABLE temp.vocab USING fts5vocab({schema}, "
                    f"'{name}', 'instance')")
        out.append(sorted(raw.execute(f'SELECT k.doc_id, k.ord, v.col, v.term, v.offset FROM temp.vocab v '
                                   f'JOIN "{chunks}" k ON k.chunk_id = v.doc')))
    assert _rows_counted(raw, index) == raw.execute(f'SELECT COUNT(*) FROM "{index}"').fetchone()[0]   # none twice
    return out[0], out[1]


def _rows_counted(raw: apsw.Connection, index: str) -> int:
    """The number of entries FTS5's averages record counts (the first varint of ``%_data`` row 1; BM25
    reads it): a rowid inserted twice counts twice there, though queries show it once."""
    value = 0
    for byte in raw.execute(f'SELECT block FROM "{index}_data" WHERE id = 1').fetchone()[0][:9]:
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            break
    return value


@pytest.mark.parametrize("strategy, separator", [("markdown", "char(10, 10)"), ("recursive", "' '")])
def test_the_writers_entries_are_what_the_trigger_indexed(db_path, monkeypatch, strategy, separator):
    added = []
    add = ChunkTextIndex.add_entries
    monkeypatch.setattr(ChunkTextIndex, "add_entries", lambda self, store, entries: (added.extend(entries),
                                                                                       add(self, store, entries)))
    con = tesseradb.connect(db_path)
    cur = con.cursor()
    _make(cur, "t", strategy)
    cur.executemany("INSERT INTO t (id, title, body) VALUES (?, ?, ?)",
                    [(n, f"Title «{n}»" if n % 2 else None, body) for n, body in enumerate(BODIES, start=1)])
    cur.execute("REPLACE INTO t (id, title, body) VALUES (3, 'Replaced', ?)", (BODIES[2][::-1],))
    cur.execute("UPDATE t SET body = 'updated words über alles' WHERE id = 5")    # embedded again
    con.commit()
    assert cur.execute("CHECK TABLE t").fetchall()[-1][2:] == ("status", "OK")
    con.close()
    raw = apsw.Connection(db_path)
    chunks = raw.execute(f'SELECT COUNT(*) FROM "{_names(raw, "t")[0]}"').fetchone()[0]
    assert len(added) > chunks / 2 > 10           # the writer gave them (the UPDATE: the trigger)
    held, expected = _entries(raw, "t", separator)
    assert held == expected and {d for d, *_ in held} == {1, 2, 3, 5}     # 4: no title, an empty body


def test_a_value_sqlite_holds_otherwise_is_indexed_by_the_trigger(db_path):
    """A number bound for a text column is stored as its text by SQLite: the writer does not guess it."""
    con = tesseradb.connect(db_path)
    cur = con.cursor()
    _make(cur, "n", "recursive")
    cur.execute("INSERT INTO n (id, title, body) VALUES (1, 'Numbers', ?), (2, 'Words', 'seven words about ducks')",
                (1234567.5,))
    con.commit()
    assert cur.execute("SELECT id FROM n WHERE hybrid_match('1234567')").fetchall()[0][0] == 1
    con.close()
    held, expected = _entries(apsw.Connection(db_path), "n", "' '")
    assert held == expected and held


def _previous_release(db_path: str) -> None:
    """The table's chunk index as the previous release left it: its insert trigger indexed every row."""
    raw = apsw.Connection(db_path)
    table, fts = _names(raw, "o")
    trigger = fts + "_ai"
    source = """COALESCE(CAST(r."title" AS TEXT), '') || ' ' || COALESCE(CAST(r."body" AS TEXT), '')"""
    with raw:
        raw.execute(f'DROP TRIGGER "{trigger}"')
        raw.execute(f'CREATE TRIGGER "{trigger}" AFTER INSERT ON "{table}" WHEN NEW.start IS NOT NULL BEGIN '
                    f'INSERT INTO "{fts}" (rowid, heading, body) SELECT NEW.chunk_id, COALESCE(NEW.context, '
                    f'NEW.heading, \'\'), substr({source}, NEW.start + 1, NEW."end" - NEW.start) FROM "o" r '
                    'WHERE r.id = NEW.doc_id; END')
    raw.close()


def test_a_file_of_the_previous_release_gets_the_new_trigger_once_without_a_rebuild(db_path, caplog):
    con = tesseradb.connect(db_path)
    _make(con.cursor(), "o", "recursive")
    con.cursor().executemany("INSERT INTO o (id, title, body) VALUES (?, 'Old', ?)", [(1, BODIES[0]), (2, BODIES[1])])
    con.commit()
    con.close()
    _previous_release(db_path)
    with caplog.at_level(logging.INFO, logger="tesseradb.fulltext"):
        con = tesseradb.connect(db_path)
    assert any("insert trigger" in r.message for r in caplog.records)
    assert not any("building" in r.message for r in caplog.records)        # the entries are kept as they are
    con.cursor().executemany("INSERT INTO o (id, title, body) VALUES (?, 'New', ?)", [(3, BODIES[2]), (4, BODIES[4])])
    con.commit()
    assert con.execute("CHECK TABLE o").fetchall()[-1][2:] == ("status", "OK")
    con.close()
    held, expected = _entries(apsw.Connection(db_path), "o", "' '")
    assert held == expected and {d for d, *_ in held} == {1, 2, 3, 4}
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="tesseradb.fulltext"):
        tesseradb.connect(db_path).close()
    assert not caplog.records                                              # once


def test_while_the_previous_trigger_is_still_there_nothing_is_indexed_twice(db_path):
    """A file whose upgrade could not run at open (another writer held it): its rows keep being
    indexed by the old trigger alone, once each."""
    con = tesseradb.connect(db_path)
    _make(con.cursor(), "o", "recursive")
    con.commit()
    _previous_release(db_path)                     # while this connection is open, as another process would
    con.cursor().executemany("INSERT INTO o (id, title, body) VALUES (?, 'Old', ?)", [(1, BODIES[0]), (2, BODIES[2])])
    con.commit()
    assert con.execute("CHECK TABLE o").fetchall()[-1][2:] == ("status", "OK")
    con.close()
    held, expected = _entries(apsw.Connection(db_path), "o", "' '")
    assert held == expected and {d for d, *_ in held} == {1, 2}
