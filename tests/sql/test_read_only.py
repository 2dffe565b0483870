"""tesseradb.connect(path, read_only=True): the engine refuses every write and every file statement,
writes no index cache, and SQLite itself holds the line below it."""
from __future__ import annotations

import os

import pytest

import tesseradb

TABLE = ("CREATE TABLE notes (title text, body text, year int, v float_vector_array knn_type='hnsw' "
         "hnsw_similarity='cosine' model_name='Xenova/all-MiniLM-L6-v2' from='title,body' "
         "chunk_strategy='sentence' max_tokens='32')")


@pytest.fixture
def path(tmp_path):
    p = str(tmp_path / "notes.db")
    con = tesseradb.connect(p, autocommit=True)
    con.execute(TABLE)
    con.execute("INSERT INTO notes (title, body, year) VALUES "
                "('Backups', 'Backups run every night. Restores start from the newest snapshot.', 2021), "
                "('Lunch', 'Lunch is served on Fridays at noon.', 2023)")
    con.close()
    return p


def snapshot(path: str) -> dict[str, bytes]:
    """Every file of the database and its index folder, by name."""
    files = {}
    for folder in (os.path.dirname(path),):
        for root, _, names in os.walk(folder):
            for name in names:
                full = os.path.join(root, name)
                with open(full, "rb") as f:
                    files[os.path.relpath(full, folder)] = f.read()
    return files


REFUSED = [
    ("INSERT INTO notes (title) VALUES ('x')", "INSERT changes the database"),
    ("UPDATE notes SET year = 1", "UPDATE changes the database"),
    ("DELETE FROM notes", "DELETE changes the database"),
    ("REPLACE INTO notes (id, title) VALUES (1, 'x')", "changes the database"),
    ("WITH x AS (SELECT 1) DELETE FROM notes", "DELETE changes the database"),
    ("DROP TABLE notes", "DROP TABLE changes the database"),
    ("CREATE TABLE z (a int)", "CREATE TABLE changes the database"),
    ("CREATE VIEW w AS SELECT 1", "CREATE VIEW changes the database"),
    ("ALTER TABLE notes ADD COLUMN tag string", "changes the database"),
    ("TRUNCATE TABLE notes", "TRUNCATE TABLE"),
    ("OPTIMIZE TABLE notes", "OPTIMIZE TABLE"),
    ("REPAIR TABLE notes", "REPAIR TABLE"),
    ("CHECK TABLE notes", "CHECK TABLE runs the full-text integrity check"),
    ("ALTER TABLE notes REBUILD KNN", "ALTER REBUILD"),
    ("SELECT * FROM notes INTO OUTFILE '{dir}/out.csv'", "INTO OUTFILE writes a file"),
    ("LOAD DATA INFILE '{dir}/in.csv' INTO TABLE notes", "LOAD DATA reads files"),
]


@pytest.mark.parametrize("sql,why", REFUSED)
def test_writes_and_file_statements_are_refused_and_nothing_changes(path, sql, why):
    folder = os.path.dirname(path)
    with open(os.path.join(folder, "in.csv"), "w") as f:
        f.write("title\nsmuggled\n")
    con = tesseradb.connect(path, read_only=True)
    con.execute("SELECT id FROM notes WHERE knn(v, 1, 'backups')").fetchall()   # indexes loaded
    before = snapshot(path)
    with pytest.raises(tesseradb.OperationalError) as info:
        con.execute(sql.format(dir=folder))
    assert info.value.errno == 1290 and info.value.sqlstate == "HY000"
    assert str(info.value).startswith("ERROR 1290 (HY000): The database is open read-only (read_only=True) "
                                      "so it cannot execute this statement")
    assert why in str(info.value)
    assert con.execute("SELECT title FROM notes ORDER BY id").fetchall() == [("Backups",), ("Lunch",)]
    con.close()
    assert snapshot(path) == before
    assert not os.path.exists(os.path.join(folder, "out.csv"))


def test_executemany_is_refused(path):
    con = tesseradb.connect(path, read_only=True)
    with pytest.raises(tesseradb.OperationalError, match="1290"):
        con.executemany("INSERT INTO notes (title) VALUES (?)", [("a",), ("b",)])
    assert con.execute("SELECT COUNT(*) FROM notes").fetchone() == (2,)


def test_reads_work_knn_hybrid_show_and_session(path):
    con = tesseradb.connect(path, read_only=True)
    assert con.read_only
    rows = con.execute("SELECT id, knn_chunk_text() FROM notes WHERE knn(v, 1, 'when are backups taken')").fetchall()
    assert rows[0][0] == 1 and "Backups" in rows[0][1]
    fused = con.execute("SELECT id FROM notes WHERE hybrid_match('lunch on friday', v) LIMIT 1").fetchall()
    assert fused == [(2,)]
    assert con.execute("SHOW TABLES").fetchall() == [("notes",)]
    assert con.execute("DESCRIBE notes").fetchall()[0][0] == "id"
    con.execute("SET @x = 5")
    assert con.execute("SELECT @x").fetchone() == (5,)
    con.execute("BEGIN")
    con.execute("COMMIT")
    assert len(con.execute("SHOW CHUNKS FROM notes.v WHERE id = 1").fetchall()) >= 1
    columns = con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = 'notes' "
                          "ORDER BY ordinal_position").fetchall()      # an attached in-memory schema
    assert [c for (c,) in columns] == ["id", "title", "body", "year", "v"]
    assert con.execute("SHOW TABLE STATUS").fetchall()[0][0] == "notes"


def test_no_index_cache_is_written(path, saved_indexes):
    for name in saved_indexes(path).names():
        saved_indexes(path).delete(name)
    con = tesseradb.connect(path, read_only=True)
    assert con.execute("SELECT id FROM notes WHERE knn(v, 1, 'lunch')").fetchall() == [(2,)]
    con.close()
    assert saved_indexes(path).names() == []     # the index was built in memory, never saved
    assert not os.path.exists(path + ".tessera")


def test_sees_what_a_writer_commits(path):
    ro = tesseradb.connect(path, read_only=True)
    rw = tesseradb.connect(path, autocommit=True)
    rw.execute("INSERT INTO notes (title, body, year) VALUES ('Certificates', 'Rotate the TLS certificate yearly.', 2024)")
    assert ro.execute("SELECT id FROM notes WHERE knn(v, 1, 'renew the tls certificate')").fetchall() == [(3,)]
    rw.close()
    ro.close()


def test_sqlite_refuses_below_the_engine(path):
    """A write that reached SQLite anyway fails there, with the engine's error, not SQLite's words."""
    con = tesseradb.connect(path, read_only=True)
    with pytest.raises(tesseradb.OperationalError) as info:
        con._call(lambda: con.db.store.execute("INSERT INTO notes (id, title) VALUES (9, 'x')"))
    assert info.value.errno == 1290
    assert "readonly" not in str(info.value)
    assert con.execute("SELECT COUNT(*) FROM notes").fetchone() == (2,)


def test_a_missing_file_is_not_created(tmp_path):
    missing = str(tmp_path / "nothing.db")
    with pytest.raises(tesseradb.OperationalError, match="no such database file"):
        tesseradb.connect(missing, read_only=True)
    assert not os.path.exists(missing)


def test_a_plain_sqlite_file_is_refused(tmp_path):
    import apsw
    plain = str(tmp_path / "plain.db")
    apsw.Connection(plain).execute("CREATE TABLE t (a)")
    with pytest.raises(tesseradb.OperationalError) as info:
        tesseradb.connect(plain, read_only=True)
    assert info.value.errno == 1290
