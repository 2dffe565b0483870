"""tesseradb.io (file formats and export) and LOAD DATA / INTO OUTFILE through SQL."""
from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tesseradb
from tesseradb.io import formats

SCALARS = "CREATE TABLE {name} (title text, n int, x float, ok bool, meta json, at timestamp)"
ROWS = [
    (1, "Hello, world", 3, 0.5, True, {"a": [1, 2]}, 1700000000),
    (2, "multi\nline \"quoted\"\ttab \\ slash", None, None, False, None, None),
    (3, "", -7, 1e-3, None, "just a string", 0),
    (4, None, 0, -2.25, True, [1, "é"], 86400),
]


@pytest.fixture
def con():
    connection = tesseradb.connect(":memory:", autocommit=True)
    yield connection
    connection.close()


@pytest.fixture
def filled(con):
    cur = con.cursor()
    cur.execute(SCALARS.format(name="src"))
    cur.executemany("INSERT INTO src (id, title, n, x, ok, meta, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(i, t, n, x, ok, None if m is None else json.dumps(m), at) for i, t, n, x, ok, m, at in ROWS])
    return cur


def rows_of(cur, table):
    return cur.execute(f"SELECT id, title, n, x, ok, meta, at FROM {table} ORDER BY id").fetchall()


def load(cur, path, table, columns=""):
    return cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE {table} {columns}")


@pytest.mark.parametrize("ext", ["csv", "tsv", "jsonl", "parquet"])
def test_export_then_load_round_trips_every_type(filled, tmp_path, ext):
    cur = filled
    path = tmp_path / f"out.{ext}"
    cur.execute(f"SELECT * FROM src INTO OUTFILE '{path}'")
    assert cur.rowcount == 4
    cur.execute(SCALARS.format(name="dst"))
    load(cur, path, "dst")
    assert cur.rowcount == 4
    assert rows_of(cur, "dst") == rows_of(cur, "src")


def test_csv_keeps_empty_strings_apart_from_null(filled, tmp_path):
    path = tmp_path / "out.csv"
    filled.execute(f"SELECT id, title FROM src WHERE id IN (3, 4) INTO OUTFILE '{path}'")
    assert path.read_text().splitlines()[1:] == ['3,""', "4,"]


def test_tsv_is_what_mysql_batch_mode_prints(filled, tmp_path):
    path = tmp_path / "out.tsv"
    filled.execute(f"SELECT id, title, n FROM src WHERE id = 2 INTO OUTFILE '{path}'")
    assert path.read_text() == 'id\ttitle\tn\n2\tmulti\\nline "quoted"\\ttab \\\\ slash\t\\N\n'


def test_jsonl_and_parquet_write_vectors_as_lists(con, tmp_path):
    cur = con.cursor()
    cur.execute("CREATE TABLE v (v float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2', "
                "a float_vector_array knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')")
    cur.execute("INSERT INTO v (id, v, a) VALUES (1, (0.5, 0.25), [[1, 0], [0, 1]]), (2, NULL, [])")
    cur.execute(f"SELECT * FROM v INTO OUTFILE '{tmp_path / 'v.jsonl'}'")
    lines = [json.loads(x) for x in (tmp_path / "v.jsonl").read_text().splitlines()]
    assert lines == [{"id": 1, "v": [0.5, 0.25], "a": [[1.0, 0.0], [0.0, 1.0]]}, {"id": 2, "v": None, "a": []}]
    cur.execute(f"SELECT * FROM v INTO OUTFILE '{tmp_path / 'v.parquet'}'")
    table = pq.read_table(tmp_path / "v.parquet")
    assert table.schema.field("v").type == pa.list_(pa.float32())
    assert table.column("a").to_pylist() == [[[1.0, 0.0], [0.0, 1.0]], []]
    cur.execute(f"SELECT * FROM v INTO OUTFILE '{tmp_path / 'v.csv'}'")
    assert (tmp_path / "v.csv").read_text().splitlines()[1] == '1,"[0.5, 0.25]","[[1.0, 0.0], [0.0, 1.0]]"'
    for ext in ("jsonl", "parquet", "csv"):
        cur.execute(f"CREATE TABLE v_{ext} (v float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2', "
                    "a float_vector_array knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')")
        load(cur, tmp_path / f"v.{ext}", f"v_{ext}")
        assert cur.execute(f"SELECT id, v, a FROM v_{ext} ORDER BY id").fetchall() == \
            cur.execute("SELECT id, v, a FROM v ORDER BY id").fetchall()


def test_load_embeds_model_columns_and_answers_knn(con, tmp_path):
    cur = con.cursor()
    cur.execute("CREATE TABLE docs (title text, body text, chunks float_vector_array knn_type='hnsw' "
                "hnsw_similarity='cosine' model_name='Xenova/all-MiniLM-L6-v2' from='title,body' "
                "chunk_strategy='sentence' max_tokens='32')")
    records = [
        {"title": "Certificates", "body": "Rotate the replication certificate every year. Install it on both hosts."},
        {"title": "Lunch", "body": "Lunch is served on Fridays at noon in the kitchen."},
        {"title": "Backups", "body": "Backups run nightly. Restores need the newest snapshot."},
    ]
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    seen = []
    con.set_progress(lambda done, total: seen.append((done, total)))
    load(cur, path, "docs")
    assert cur.rowcount == 3
    assert seen and seen[-1][0] == seen[-1][1]
    assert all(b[0] >= a[0] for a, b in zip(seen, seen[1:]))
    counts = cur.execute("SELECT id, LENGTH(chunks) FROM docs ORDER BY id").fetchall()
    assert [n for _, n in counts] and all(n >= 1 for _, n in counts)
    hit = cur.execute("SELECT id, title FROM docs WHERE knn(chunks, 1, 'when is lunch')").fetchall()
    assert hit == [(2, "Lunch")]


def test_progress_spans_batches(con, tmp_path, monkeypatch):
    monkeypatch.setattr(formats, "BATCH_ROWS", 2)
    cur = con.cursor()
    cur.execute("CREATE TABLE d (body text, c float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
                "model_name='Xenova/all-MiniLM-L6-v2' from='body' chunk_strategy='sentence' max_tokens='32')")
    path = tmp_path / "d.csv"
    path.write_text("body\n" + "".join(f"Sentence {i} here. Another one {i}.\n" for i in range(7)))
    seen = []
    con.set_progress(lambda done, total: seen.append((done, total)))
    load(cur, path, "d")
    dones = [d for d, _ in seen]
    assert dones == sorted(dones) and seen[-1][0] == seen[-1][1]
    assert seen[-1][0] == cur.execute("SELECT SUM(LENGTH(c)) FROM d").fetchone()[0]


def test_bad_value_names_file_line_and_column_and_loads_nothing(con, tmp_path, monkeypatch):
    monkeypatch.setattr(formats, "BATCH_ROWS", 2)              # the bad row is in a later batch
    cur = con.cursor()
    cur.execute(SCALARS.format(name="t"))
    path = tmp_path / "bad.csv"
    path.write_text('title,n\n"two\nlines",1\nb,2\nc,3\nd,4\ne,oops\n')
    with pytest.raises(tesseradb.DataError) as info:
        load(cur, path, "t")
    assert info.value.msg == f"'{path}' line 7, column 'n': Incorrect integer value: 'oops'"
    assert cur.execute("SELECT COUNT(*) FROM t").fetchone() == (0,)


@pytest.mark.parametrize("content, message", [
    ('{"n": 1}\n\n{"n": "x"}\n', "line 3, column 'n': Incorrect integer value: 'x'"),
    ('{"n": 1}\n{"n": \n', "line 2: invalid JSON"),
    ('[1, 2]\n', "line 1: each line must be one JSON object"),
    ('{"ok": "maybe"}\n', "line 1, column 'ok': Incorrect boolean value: 'maybe'"),
    ('{"meta": "{broken"}\n', None),
    ('{"at": "yesterday"}\n', "line 1, column 'at': Incorrect timestamp value: 'yesterday'"),
])
def test_jsonl_errors(con, tmp_path, content, message):
    cur = con.cursor()
    cur.execute(SCALARS.format(name="t"))
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    if message is None:                          # in JSONL a json column takes any JSON value
        load(cur, path, "t")
        assert cur.execute("SELECT meta FROM t").fetchone() == ("{broken",)
        return
    with pytest.raises(tesseradb.Error) as info:
        load(cur, path, "t")
    assert info.value.msg.startswith(f"'{path}' {message}")
    assert cur.execute("SELECT COUNT(*) FROM t").fetchone() == (0,)


def test_csv_json_column_must_hold_json_text(con, tmp_path):
    cur = con.cursor()
    cur.execute(SCALARS.format(name="t"))
    path = tmp_path / "j.csv"
    path.write_text('meta\n"{""a"": 1}"\n{broken\n')
    with pytest.raises(tesseradb.DataError, match=r"line 3, column 'meta': Invalid JSON text: '\{broken'"):
        load(cur, path, "t")


def test_csv_row_with_wrong_field_count(con, tmp_path):
    cur = con.cursor()
    cur.execute(SCALARS.format(name="t"))
    path = tmp_path / "w.csv"
    path.write_text("title,n\na,1\nb,2,3\n")
    with pytest.raises(tesseradb.DataError, match=r"'.*w\.csv' line 3: expected 2 fields, found 3"):
        load(cur, path, "t")


def test_vector_errors_name_the_line(con, tmp_path):
    cur = con.cursor()
    cur.execute("CREATE TABLE v (v float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')")
    path = tmp_path / "v.jsonl"
    path.write_text('{"v": [1, 2]}\n{"v": [1, 2, 3]}\n')
    with pytest.raises(tesseradb.DataError, match=r"'.*v\.jsonl' line 2, column 'v': data has 3 values"):
        load(cur, path, "v")


def test_duplicate_id_names_the_line(con, tmp_path):
    cur = con.cursor()
    cur.execute(SCALARS.format(name="t"))
    cur.execute("INSERT INTO t (id, title) VALUES (5, 'existing')")
    path = tmp_path / "d.csv"
    path.write_text("id,title\n1,a\n5,b\n")
    with pytest.raises(tesseradb.IntegrityError) as info:
        load(cur, path, "t")
    assert info.value.msg == f"'{path}' line 3: duplicate id '5'"
    cur.execute(f"LOAD DATA INFILE '{path}' REPLACE INTO TABLE t")
    assert cur.execute("SELECT id, title FROM t ORDER BY id").fetchall() == [(1, "a"), (5, "b")]


def test_column_list_maps_csv_fields_in_order(con, tmp_path):
    cur = con.cursor()
    cur.execute(SCALARS.format(name="t"))
    path = tmp_path / "c.csv"
    path.write_text("first,second\n7,seven\n")
    load(cur, path, "t", "(n, title)")
    assert cur.execute("SELECT n, title FROM t").fetchall() == [(7, "seven")]
    with pytest.raises(tesseradb.DataError, match="has 2 fields per line but the column list names 1"):
        load(cur, path, "t", "(n)")


def test_column_list_picks_jsonl_and_parquet_fields_by_name(con, tmp_path):
    cur = con.cursor()
    cur.execute(SCALARS.format(name="t"))
    (tmp_path / "p.jsonl").write_text('{"title": "a", "n": 1, "extra": true}\n{"n": 2}\n')
    load(cur, tmp_path / "p.jsonl", "t", "(n, title)")
    pq.write_table(pa.table({"title": ["b"], "n": [3], "extra": [1.5]}), tmp_path / "p.parquet")
    load(cur, tmp_path / "p.parquet", "t", "(title, n)")
    assert cur.execute("SELECT n, title FROM t ORDER BY n").fetchall() == [(1, "a"), (2, None), (3, "b")]
    with pytest.raises(tesseradb.DataError, match="the file has no column 'x'"):
        load(cur, tmp_path / "p.parquet", "t", "(x)")


def test_unknown_column_in_the_file(con, tmp_path):
    cur = con.cursor()
    cur.execute(SCALARS.format(name="t"))
    (tmp_path / "u.csv").write_text("title,colour\na,red\n")
    with pytest.raises(tesseradb.ProgrammingError) as info:
        load(cur, tmp_path / "u.csv", "t")
    assert info.value.errno == 1054
    assert info.value.msg == f"'{tmp_path / 'u.csv'}' line 1: Unknown column 'colour' in 'field list'"


def test_missing_file_unknown_type_and_unknown_table(con, tmp_path):
    cur = con.cursor()
    cur.execute(SCALARS.format(name="t"))
    with pytest.raises(tesseradb.OperationalError) as info:
        load(cur, tmp_path / "none.csv", "t")
    assert info.value.errno == 29 and "not found" in info.value.msg
    (tmp_path / "x.xml").write_text("<a/>\n")
    with pytest.raises(tesseradb.NotSupportedError, match=r"unsupported file type '\.xml'.*or documents"):
        load(cur, tmp_path / "x.xml", "t")
    with pytest.raises(tesseradb.ProgrammingError, match="table 'nope' does not exist"):
        load(cur, tmp_path / "none.csv", "nope")


def test_parquet_with_native_types(con, tmp_path):
    import datetime
    cur = con.cursor()
    cur.execute(SCALARS.format(name="t"))
    pq.write_table(pa.table({
        "title": ["x"], "n": pa.array([5], pa.int32()), "x": pa.array([1.5], pa.float32()), "ok": [True],
        "meta": ['{"k": 1}'], "at": [datetime.datetime(1970, 1, 2)],
    }), tmp_path / "n.parquet")
    load(cur, tmp_path / "n.parquet", "t")
    assert cur.execute("SELECT title, n, x, ok, meta, at FROM t").fetchall() == \
        [("x", 5, 1.5, True, {"k": 1}, 86400)]


def test_load_inside_a_rolled_back_transaction_leaves_nothing(con, tmp_path):
    cur = con.cursor()
    cur.execute(SCALARS.format(name="t"))
    (tmp_path / "ok.csv").write_text("title\na\nb\n")
    cur.execute("BEGIN")
    load(cur, tmp_path / "ok.csv", "t")
    assert cur.execute("SELECT COUNT(*) FROM t").fetchone() == (2,)
    cur.execute("ROLLBACK")
    assert cur.execute("SELECT COUNT(*) FROM t").fetchone() == (0,)


def test_outfile_overwrites_atomically_and_reports_bad_paths(filled, tmp_path):
    path = tmp_path / "o.jsonl"
    path.write_text("old\n")
    filled.execute(f"SELECT id FROM src INTO OUTFILE '{path}'")
    assert path.read_text().splitlines() == ['{"id": 1}', '{"id": 2}', '{"id": 3}', '{"id": 4}']
    with pytest.raises(tesseradb.OperationalError, match="Can't create/write to file"):
        filled.execute(f"SELECT id FROM src INTO OUTFILE '{tmp_path / 'missing' / 'o.csv'}'")
    assert [p.name for p in tmp_path.iterdir()] == ["o.jsonl"]      # no temporary file left behind


def test_outfile_of_a_knn_query(con, tmp_path):
    cur = con.cursor()
    cur.execute("CREATE TABLE v (v float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')")
    cur.execute("INSERT INTO v (id, v) VALUES (1, (0, 0)), (2, (3, 4))")
    cur.execute(f"SELECT id, knn_dist() AS d FROM v WHERE knn(v, 2, (0, 0)) INTO OUTFILE '{tmp_path / 'k.csv'}'")
    assert cur.rowcount == 2
    assert (tmp_path / "k.csv").read_text().splitlines() == ['"id","d"', "1,0", "2,25"]


def test_result_to_arrow_still_works(filled):
    table = filled.execute("SELECT id, title FROM src ORDER BY id").fetch_arrow_table()
    assert table.column("id").to_pylist() == [1, 2, 3, 4]


def test_progress_of_a_load_with_two_model_columns(con, tmp_path, monkeypatch):
    monkeypatch.setattr(formats, "BATCH_ROWS", 2)
    cur = con.cursor()
    cur.execute("CREATE TABLE d (body text, "
                "c1 float_vector_array knn_type='hnsw' hnsw_similarity='cosine' model_name='Xenova/all-MiniLM-L6-v2' "
                "from='body' chunk_strategy='sentence' max_tokens='32', "
                "c2 float_vector knn_type='hnsw' hnsw_similarity='cosine' model_name='Xenova/all-MiniLM-L6-v2' "
                "from='body')")
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"body": f"Sentence {i} here. Another one {i}."}) + "\n" for i in range(5)))
    seen = []
    con.set_progress(lambda done, total: seen.append((done, total)))
    load(cur, path, "d")
    dones = [d for d, _ in seen]
    assert dones == sorted(dones)
    assert all(d < t for d, t in seen[:-1]) and seen[-1][0] == seen[-1][1]
    assert seen[-1][0] == cur.execute("SELECT SUM(LENGTH(c1)) FROM d").fetchone()[0] + 5
