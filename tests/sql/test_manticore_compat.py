"""Manticore compatibility (docs/compatibility.md, "Manticore"): the statements of Manticore's manual
and tests, run as written. The SQL-only cases are in tests/sql/manticore/*.test; this file holds what
needs Python: progress, interrupts, index files, statements re-run from SHOW CREATE TABLE, the
formats of TO_STRING(), and a check that every row of the compatibility table names a test that exists.
"""
from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

import tesseradb
from tesseradb.catalog.vector_text import array_text, float_text, to_string, vector_text
from tesseradb.grammar import GrammarError, parse
from tesseradb.grammar import ast as gast
from tesseradb.storage.blobs import pack_array, pack_vector

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = "Xenova/all-MiniLM-L6-v2"


def rows(con, sql, params=None):
    return con.execute(sql, params).fetchall()


def show_create(con, table):
    return rows(con, f"SHOW CREATE TABLE {table}")[0][1]


@pytest.fixture
def con():
    c = tesseradb.connect(":memory:")
    yield c
    c.close()


# -- SHOW CREATE TABLE re-creates the table (from='' kept, model_name as written) -------------------
RECREATED = [
    f"CREATE TABLE products_all (title TEXT, description TEXT, embedding_vector FLOAT_VECTOR KNN_TYPE='hnsw' "
    f"HNSW_SIMILARITY='l2' MODEL_NAME='{MODEL}' FROM='')",
    "CREATE TABLE st (title text, v float_vector knn_type='hnsw' model_name='sentence-transformers/all-MiniLM-L6-v2' "
    "from='title' chunk_strategy='mean')",
    "create table q (title text, tag integer, emp float_vector knn_type='hnsw' knn_dims='8' hnsw_similarity='l2' "
    "quantization='8bit')",
    "CREATE TABLE products ( title string attribute indexed, body text indexed, note text stored )",
    "create table tbl(title text, type int, price float engine='rowwise') engine='columnar'",
    "create table t",
]


@pytest.mark.parametrize("ddl", RECREATED, ids=[d.split()[2] for d in RECREATED])
def test_show_create_table_recreates_the_same_table(con, ddl):
    name = ddl.split()[2].split("(")[0]
    con.execute(ddl)
    printed = show_create(con, name)
    described = rows(con, f"DESCRIBE {name}")
    con.execute(f"DROP TABLE {name}")
    con.execute(printed)
    assert show_create(con, name) == printed
    assert rows(con, f"DESCRIBE {name}") == described


def test_from_empty_is_every_text_and_string_column_in_table_order(con):
    con.execute(f"CREATE TABLE a (n int, title text, tag string, body text, v float_vector knn_type='hnsw' "
                f"model_name='{MODEL}' from='')")
    con.execute(f"CREATE TABLE b (n int, title text, tag string, body text, v float_vector knn_type='hnsw' "
                f"model_name='{MODEL}' from='title,tag,body')")
    con.execute(f"CREATE TABLE c (n int, title text, tag string, body text, v float_vector knn_type='hnsw' "
                f"model_name='{MODEL}' from='body,tag,title')")
    for table in "abc":
        con.execute(f"INSERT INTO {table} (id, n, title, tag, body) VALUES (1, 5, 'cats', 'pets', 'they purr')")
    a, b, c = (np.array(rows(con, f"SELECT v FROM {t}")[0][0]) for t in "abc")
    assert np.array_equal(a, b)
    assert not np.allclose(a, c)                  # the order of the columns matters
    assert "from=''" in show_create(con, "a")


# -- api_* on a local model: accepted, with a warning per option ---------------------------------------
def test_remote_model_options_on_a_local_model_warn(con):
    con.execute(f"CREATE TABLE p (title TEXT, v FLOAT_VECTOR KNN_TYPE='hnsw' MODEL_NAME='{MODEL}' FROM='title' "
                "API_KEY='***' API_TIMEOUT='30')")
    assert [(w[0], w[1]) for w in con.warnings] == [("Warning", 1287), ("Warning", 1287)]
    assert "api_key is ignored for column 'v'" in con.warnings[0][2]
    assert "api_key" not in show_create(con, "p").lower()      # never printed, as in Manticore


# -- models and statements that are not supported: the error a user gets -----------------------------
NOT_SUPPORTED = [
    ("CREATE TABLE products_qwen (title TEXT, description TEXT, embedding_vector FLOAT_VECTOR KNN_TYPE='hnsw' "
     "HNSW_SIMILARITY='l2' MODEL_NAME='Qwen/Qwen3-Embedding-0.6B' FROM='title')",
     "unknown model 'Qwen/Qwen3-Embedding-0.6B'"),
    ("ALTER TABLE t MODIFY COLUMN v API_KEY='new-key'", "syntax error"),
    ("flush ramchunk t", "syntax error, unexpected 'flush'"),
    ("SELECT id FROM t WHERE knn(v, 'hello') OPTION embeddings_threads=2", "unknown option 'embeddings_threads'"),
]


@pytest.mark.parametrize("sql,message", NOT_SUPPORTED, ids=[m for _, m in NOT_SUPPORTED])
def test_not_supported_gives_a_1064_error(con, sql, message):
    con.execute(f"CREATE TABLE t (title text, v float_vector knn_type='hnsw' model_name='{MODEL}' from='title')")
    con.execute("INSERT INTO t (id, title) VALUES (1, 'hello world')")
    with pytest.raises(tesseradb.ProgrammingError) as info:
        con.execute(sql)
    assert info.value.errno == 1064 and message in str(info.value)
    assert rows(con, "SELECT COUNT(*) FROM t") == [(1,)]


# -- ALTER TABLE ... ADD COLUMN of a model-backed float_vector_array (Manticore refuses) -------------
def test_add_model_backed_array_embeds_existing_rows(con):
    con.execute("CREATE TABLE t (title text)")
    con.execute("INSERT INTO t (id, title) VALUES (1, 'One sentence here. Another one there. A third.')")
    con.execute(f"ALTER TABLE t ADD COLUMN v float_vector_array knn_type='hnsw' model_name='{MODEL}' from='title' "
                "chunk_strategy='sentence' max_tokens='6'")
    assert rows(con, "SELECT LENGTH(v) > 1 FROM t") == [(1,)]
    assert rows(con, "SELECT id FROM t WHERE knn(v, 'another one')") == [(1,)]


# -- ALTER TABLE t REBUILD EMBEDDINGS: progress, interrupt, one transaction ---------------------------
def _model_table(con, n=12):
    con.execute(f"CREATE TABLE m (title text, v float_vector_array knn_type='hnsw' model_name='{MODEL}' "
                "from='title' chunk_strategy='sentence' max_tokens='8')")
    con.executemany("INSERT INTO m (id, title, v) VALUES (?, ?, [])",
                    [(i, f"Row {i} talks about topic {i}. Its second sentence is number {i}.") for i in range(1, n + 1)])


def test_rebuild_embeddings_reports_progress(con):
    _model_table(con)
    seen = []
    con.set_progress(lambda done, total: seen.append((done, total)))
    con.execute("ALTER TABLE m REBUILD EMBEDDINGS v")
    assert seen and seen[-1][0] == seen[-1][1] >= 24           # every chunk of every row
    assert all(done <= total for done, total in seen)
    assert rows(con, "SELECT MIN(LENGTH(v)) FROM m") == [(2,)]


def test_rebuild_embeddings_interrupted_changes_nothing(con):
    _model_table(con, n=60)                 # 120 distinct chunks: two batches of the model (64 each)
    con.set_progress(lambda done, total: con.interrupt())    # stop after the first batch
    with pytest.raises(tesseradb.OperationalError) as info:
        con.execute("ALTER TABLE m REBUILD EMBEDDINGS")
    assert info.value.errno == 1317
    con.set_progress(None)
    assert rows(con, "SELECT MAX(LENGTH(v)) FROM m") == [(0,)]
    assert rows(con, "SELECT COUNT(*) FROM m WHERE knn(v, 5, 'topic 3')") == [(0,)]


def test_rebuild_embeddings_is_one_transaction(con):
    _model_table(con, n=3)
    con.execute("BEGIN")
    con.execute("ALTER TABLE m REBUILD EMBEDDINGS v")
    assert rows(con, "SELECT id FROM m WHERE knn(v, 1, 'topic 2')") == [(2,)]   # the transaction sees it
    con.execute("ROLLBACK")
    assert rows(con, "SELECT COUNT(*) FROM m WHERE knn(v, 5, 'topic 2')") == [(0,)]


def test_rebuild_embeddings_uses_the_saved_chunk_settings(con):
    _model_table(con, n=2)
    con.execute("ALTER TABLE m REBUILD EMBEDDINGS v")
    con.execute("CREATE TABLE fresh (title text, v float_vector_array knn_type='hnsw' "
                f"model_name='{MODEL}' from='title' chunk_strategy='sentence' max_tokens='8')")
    con.execute("INSERT INTO fresh (id, title) SELECT id, title FROM m")
    assert rows(con, "SELECT COUNT(*) FROM m JOIN fresh f ON f.id = m.id WHERE TO_STRING(m.v) = TO_STRING(f.v)") \
        == [(2,)]


# -- ALTER TABLE t REBUILD KNN ---------------------------------------------------------------------
def test_rebuild_knn_rebuilds_a_lost_saved_index(tmp_path, saved_indexes):
    path = str(tmp_path / "k.db")
    con = tesseradb.connect(path)
    con.execute("CREATE TABLE t (v float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')")
    con.executemany("INSERT INTO t (id, v) VALUES (?, ?)", [(i, [float(i), 0.0]) for i in range(1, 50)])
    con.commit()
    assert rows(con, "SELECT id FROM t WHERE knn(v, 2, (3, 0))") == [(3,), (2,)]
    con.close()
    saved = saved_indexes(path)
    assert saved.names()
    for name in saved.names():
        saved.delete(name)
    con = tesseradb.connect(path)
    con.execute("ALTER TABLE t REBUILD KNN")
    assert saved.names()                                       # saved again by the rebuild
    assert rows(con, "SELECT id FROM t WHERE knn(v, 2, (3, 0))") == [(3,), (2,)]
    con.close()


def test_rebuild_knn_commits_an_open_transaction(con):
    con.execute("CREATE TABLE t (v float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')")
    con.execute("BEGIN")
    con.execute("INSERT INTO t (id, v) VALUES (1, (1, 1))")
    con.execute("ALTER TABLE t REBUILD KNN")
    con.execute("ROLLBACK")                                    # nothing left to undo: REBUILD KNN committed
    assert rows(con, "SELECT id FROM t WHERE knn(v, 1, (1, 1))") == [(1,)]


# -- ADD COLUMN of a vector column without a model: NULL, never matched ----------------------------
def test_added_vector_column_leaves_existing_rows_without_vectors(con):
    # test-alter-rebuild-knn.rec: Manticore stores zero vectors, which then match every query
    con.execute("create table t(f text)")
    con.execute("insert into t values(1, 'abc')")
    con.execute("alter table t add column v2 FLOAT_VECTOR knn_type='hnsw' knn_dims='3' hnsw_similarity='L2'")
    con.execute("insert into t(id,v2) values(3,(1,1,1))")
    assert rows(con, "select id, v2 from t order by id") == [(1, None), (3, [1.0, 1.0, 1.0])]
    assert rows(con, "select id from t where knn(v2, 10, (0.5,0.5,0.5))") == [(3,)]
    con.execute("update t set v2 = (0,0,0) where id = 1")        # a zero vector, given: it matches
    assert rows(con, "select id, knn_dist() from t where knn(v2, 10, (0.5,0.5,0.5)) order by id") == \
        [(1, 0.75), (3, 0.75)]


# -- knn without k, against the same query with k ----------------------------------------------------
def test_knn_without_k_equals_k_from_limit(con):
    con.execute("CREATE TABLE t (v float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')")
    rng = np.random.default_rng(7)
    con.executemany("INSERT INTO t (id, v) VALUES (?, ?)", [(i, rng.random(2).tolist()) for i in range(1, 101)])
    q = [0.5, 0.5]
    assert rows(con, "SELECT id FROM t WHERE knn(v, ?) LIMIT 7", [q]) == rows(con, "SELECT id FROM t WHERE knn(v, 7, ?)", [q])
    assert rows(con, "SELECT id FROM t WHERE knn(v, ?) LIMIT 3 OFFSET 4", [q]) == \
        rows(con, "SELECT id FROM t WHERE knn(v, 7, ?)", [q])[4:]
    assert rows(con, "SELECT id FROM t WHERE knn(v, ?)", [q]) == rows(con, "SELECT id FROM t WHERE knn(v, 20, ?)", [q])
    assert rows(con, "SELECT id FROM t WHERE knn(v, ?) LIMIT ?", [q, 4]) == rows(con, "SELECT id FROM t WHERE knn(v, 4, ?)", [q])


def test_fullscan_and_the_index_agree(con):
    con.execute("CREATE TABLE t (v float_vector knn_type='hnsw' knn_dims='8' hnsw_similarity='cosine')")
    rng = np.random.default_rng(3)
    con.executemany("INSERT INTO t (id, v) VALUES (?, ?)", [(i, rng.standard_normal(8).tolist()) for i in range(1, 301)])
    con.commit()
    q = rng.standard_normal(8).tolist()
    exact = rows(con, "SELECT id FROM t WHERE knn(v, 10, ?, {fullscan=1})", [q])
    assert rows(con, "SELECT id FROM t WHERE knn(v, 10, ?, {ef=300})", [q]) == exact


# -- TO_STRING(): Manticore's formats (sphinxutils.cpp PrintVarFloat, attribute.cpp) -----------------
@pytest.mark.parametrize("value,text", [
    (0.5, "0.500000"), (1.0, "1.000000"), (0.0, "0.000000"), (-2.25, "-2.250000"),
    (0.653448, "0.653448"),                       # six decimals read back as the same float32
    (0.57735026, "0.57735026"),                   # they would not: eight
    (1e-7, "0.00000010"),
])
def test_float_text(value, text):
    assert float_text(value) == text


def test_vector_texts():
    assert vector_text(pack_vector(np.array([0.1, 0.2], np.float32))) == "0.100000,0.200000"
    assert vector_text(b"") == "" and vector_text(None) is None
    assert array_text(pack_array(np.array([[1, 0], [0, 1]], np.float32))) == "[[1.000000,0.000000],[0.000000,1.000000]]"
    assert array_text(b"") == "[]"
    assert to_string(2.5) == "2.500000" and to_string(7) == "7" and to_string("x") == "x" and to_string(None) is None


def test_to_string_in_sql(con):
    con.execute("CREATE TABLE t (n int, f float, s string, v float_vector, a float_vector_array)")
    con.execute("INSERT INTO t (id, n, f, s, v, a) VALUES (1, 3, 2.5, 'x', (0.1, 0.2), [[1,2],[3,4]]), (2, 0, 0, '', (), [])")
    assert rows(con, "SELECT TO_STRING(n), TO_STRING(f), TO_STRING(s), TO_STRING(v), TO_STRING(a) FROM t ORDER BY id") == [
        ("3", "2.500000", "x", "0.100000,0.200000", "[[1.000000,2.000000],[3.000000,4.000000]]"),
        ("0", "0.000000", "", None, "[]"),
    ]


# -- the compatibility table: every row names a test that exists ------------------------------------
def _manticore_rows() -> list[list[str]]:
    text = (ROOT / "docs" / "compatibility.md").read_text(encoding="utf-8")
    section = text.split("## Manticore", 1)[1].split("\n## ", 1)[0]
    table = [line for line in section.splitlines() if line.startswith("|")]
    return [[c.strip() for c in line.strip("|").split("|")] for line in table[2:]]


def test_every_compatibility_row_names_an_existing_test():
    rows_ = _manticore_rows()
    assert len(rows_) >= 30
    for row in rows_:
        status, where = row[2], row[-1]
        assert re.match(r"\*\*(same|different|not supported)", status), row
        refs = re.findall(r"`(tests/[^`:]+)(?:::(\w+))?`", where)
        assert refs, f"no test named for: {row[0]}"
        for path, name in refs:
            file = ROOT / path
            assert file.exists(), path
            if name:
                assert re.search(rf"^def {name}\b", file.read_text(encoding="utf-8"), re.M), f"{path}::{name}"


def test_placeholders_bind_in_the_order_written(con):
    # LIMIT ? after WHERE ... ?: sqlglot's tree puts LIMIT first; the values must follow the text
    con.execute("CREATE TABLE t (a int)")
    con.executemany("INSERT INTO t (id, a) VALUES (?, ?)", [(i, i) for i in range(1, 11)])
    assert rows(con, "SELECT id FROM t WHERE a > ? ORDER BY id LIMIT ?", [5, 2]) == [(6,), (7,)]
    assert rows(con, "SELECT id FROM t WHERE a > ? ORDER BY id LIMIT ? OFFSET ?", [5, 2, 1]) == [(7,), (8,)]


# -- the grammar's Manticore forms -------------------------------------------------------------------
@pytest.mark.parametrize("sql,node", [
    ("ALTER TABLE t REBUILD KNN", gast.AlterRebuild("t", "knn")),
    ("alter table t rebuild embeddings v", gast.AlterRebuild("t", "embeddings", "v")),
    ("alter table `my t` rebuild embeddings", gast.AlterRebuild("my t", "embeddings")),
    ("create table t", gast.CreateTable("t", ())),
    ("create table t engine='columnar'", gast.CreateTable("t", (), options=(("engine", "columnar"),))),
])
def test_grammar_nodes(sql, node):
    assert parse(sql) == node


def test_text_and_string_properties_parse_to_types():
    stmt = parse("create table p (a string attribute indexed, b text indexed, c text stored, d text attribute, "
                 "e string attribute, knn text, embeddings text)")
    assert [(c.name, c.type, c.type_text) for c in stmt.columns] == [
        ("a", "text", "string attribute indexed"), ("b", "text", "text indexed"), ("c", "string", "text stored"),
        ("d", "string", "text attribute"), ("e", "string", "string attribute"),
        ("knn", "text", "text"), ("embeddings", "text", "text")]


def test_knn_dist_variable_is_knn_dist():
    stmt = parse("SELECT id, @knn_dist FROM t WHERE knn(v, (1,2)) AND @knn_dist < 1 ORDER BY @knn_dist")
    sql = stmt.expr.sql(dialect="mysql")
    assert "@" not in sql.replace("`@knn_dist`", "")
    assert sql.count("KNN_DIST()") == 3


def test_a_trailing_word_after_the_columns_is_named_in_the_error():
    with pytest.raises(GrammarError, match="syntax error near 'junk'"):
        parse("CREATE TABLE t (a int) junk")


# -- the manual's statements through the mysql protocol, as a Manticore user sends them -------------
def test_manual_statements_over_the_mysql_protocol(tmp_path):
    from tests.server.support import mariadb
    srv = tesseradb.serve(str(tmp_path / "m.db"), port=0, background=True)
    try:
        script = (
            "create table test ( title text, image_vector float_vector knn_type='hnsw' knn_dims='4' "
            "hnsw_similarity='l2' );\n"
            "insert into test values ( 1, 'yellow bag', (0.653448,0.192478,0.017971,0.339821) ), "
            "( 2, 'white bag', (-0.148894,0.748278,0.091892,-0.095406) );\n"
            "select id, knn_dist() from test where knn ( image_vector, (0.286569,-0.031816,0.066684,0.032926), "
            "{ ef=2000, oversampling=3.0, rescore=1 } );\n"
            "select * from test where knn ( image_vector, 5, (0.286569,-0.031816,0.066684,0.032926) );\n"
            "alter table test rebuild knn;\n"
            "select id, knn_dist() from test where knn ( image_vector, 5, 1 );\n")
        out = mariadb(srv.port, "-B", sql=script, check=True).stdout.splitlines()
    finally:
        srv.stop()
    cells = [line.split("\t") for line in out]
    # the manual's answers: 1 at 0.28146550, 2 at 0.81527930; by id, 2 at 1.14755...
    assert cells[0] == ["id", "knn_dist()"] and [c[0] for c in cells[1:3]] == ["1", "2"]
    assert [float(c[1]) for c in cells[1:3]] == pytest.approx([0.2814655, 0.8152793], abs=1e-6)
    assert cells[3] == ["id", "title", "image_vector", "@knn_dist"]
    assert cells[4][:3] == ["1", "yellow bag", "0.653448,0.192478,0.017971,0.339821"]
    assert cells[6] == ["id", "knn_dist()"] and cells[7][0] == "2" and len(cells) == 8
