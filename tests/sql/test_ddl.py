"""DDL: CREATE (every type, vector options), SHOW CREATE TABLE re-runs, DESCRIBE, ALTER, DROP, TRUNCATE,
and the catalog surviving a reopen."""
from __future__ import annotations

import pytest

import tesseradb

MODEL = "Xenova/all-MiniLM-L6-v2"
ALL_TYPES = ("CREATE TABLE everything (a text, b string, c int, d integer, e bigint, f float, g bool, h json, "
             "i timestamp, j varchar(64), k double, l tinyint, m boolean, n datetime, "
             "u float_vector, w float_vector_array, "
             "x float_vector knn_type='hnsw' knn_dims='3' hnsw_similarity='cosine', "
             "y float_vector_array KNN_TYPE='HNSW' knn_dims=8 hnsw_similarity=IP hnsw_m='32' hnsw_ef_construction='64')")


def rows(con, sql, params=None):
    return con.execute(sql, params).fetchall()


def show_create(con, table):
    name, sql = rows(con, f"SHOW CREATE TABLE {table}")[0]
    assert name == table.strip("`")
    return sql


def test_show_create_table_writes_every_option_out(con):
    con.execute(ALL_TYPES)
    assert show_create(con, "everything") == (
        "CREATE TABLE `everything` (\n"
        "  `id` bigint,\n  `a` text,\n  `b` string,\n  `c` int,\n  `d` integer,\n  `e` bigint,\n  `f` float,\n  `g` bool,\n"
        "  `h` json,\n  `i` timestamp,\n  `j` varchar(64),\n  `k` double,\n  `l` tinyint,\n  `m` boolean,\n  `n` datetime,\n"
        "  `u` float_vector,\n  `w` float_vector_array,\n"
        "  `x` float_vector knn_type='hnsw' knn_dims='3' hnsw_similarity='cosine' hnsw_m='16' "
        "hnsw_ef_construction='200',\n"
        "  `y` float_vector_array knn_type='hnsw' knn_dims='8' hnsw_similarity='ip' hnsw_m='32' "
        "hnsw_ef_construction='64'\n)")


def test_show_create_table_re_creates_the_same_table(con):
    con.execute(ALL_TYPES)
    con.execute("CREATE TABLE `odd name` (`select` text, `two words` int, `from` string)")
    for table in ("everything", "`odd name`"):
        before = show_create(con, table)
        describe = rows(con, f"DESCRIBE {table}")
        con.execute(f"DROP TABLE {table}")
        con.execute(before)
        assert show_create(con, table) == before
        assert rows(con, f"DESCRIBE {table}") == describe


def test_describe_shows_types_and_knn(con):
    con.execute(ALL_TYPES)
    described = {name: (kind, props) for name, kind, props in rows(con, "DESCRIBE everything")}
    assert described["id"] == ("bigint", "")             # Manticore's document id: no properties
    assert described["a"] == ("text", "indexed stored")  # MATCH searches it, SELECT returns it
    assert described["b"] == ("string", "")
    assert described["d"] == ("integer", "")             # as declared
    assert described["j"] == ("varchar(64)", "")         # as declared, not the canonical string
    assert described["k"] == ("double", "")
    assert described["n"] == ("datetime", "")              # MySQL's DATETIME, no longer a timestamp
    assert described["u"] == ("float_vector", "")
    assert described["x"] == ("float_vector", "knn")      # knn alone, as Manticore prints it (issue 36)
    assert described["y"] == ("float_vector_array", "knn")
    extra = {r[0]: r[5] for r in rows(con, "SHOW COLUMNS FROM everything")}    # the options: SHOW COLUMNS' Extra
    assert extra["x"] == "knn knn_type='hnsw' knn_dims='3' hnsw_similarity='cosine' hnsw_m='16' hnsw_ef_construction='200'"
    assert extra["y"] == "knn knn_type='hnsw' knn_dims='8' hnsw_similarity='ip' hnsw_m='32' hnsw_ef_construction='64'"
    assert extra["u"] == ""
    cur = con.execute("DESCRIBE everything")
    assert [d[0] for d in cur.description] == ["Field", "Type", "Properties"]


def test_describe_shows_the_mysql_facts_of_each_column(con):
    con.execute("CREATE TABLE people (user_id int PRIMARY KEY AUTO_INCREMENT, name varchar(255) NOT NULL "
                "DEFAULT '', email VARCHAR(80) UNIQUE, score decimal(10,2) DEFAULT 1.5, born date, "
                "n int unsigned NOT NULL)")
    con.execute("CREATE INDEX by_born ON people (born)")
    assert rows(con, "DESCRIBE people") == [
        ("user_id", "int", "primary key auto_increment"),
        ("name", "varchar(255)", "not null default ''"),
        ("email", "varchar(80)", "unique"),
        ("score", "decimal(10,2)", "default 1.5"),
        ("born", "date", "key"),
        ("n", "int unsigned", "not null"),
    ]


def test_describe_shows_every_option_of_a_model_column(con):
    con.execute(f"CREATE TABLE docs (title text, body text, tag text stored, v float_vector_array "
                f"knn_type='hnsw' hnsw_similarity='cosine' model_name='{MODEL}' from='title,body' "
                f"chunk_strategy='sentence' max_tokens='64' overlap_tokens='8' max_chunks='16')")
    described = {name: (kind, props) for name, kind, props in rows(con, "DESCRIBE docs")}
    assert described["tag"] == ("text", "stored")        # text stored: kept, not searched by MATCH
    assert described["v"] == ("float_vector_array", "knn")     # Manticore's DESCRIBE (issue 36)
    props = {r[0]: r[6] for r in rows(con, "SHOW FULL COLUMNS FROM docs")}["v"]     # Extra: every option
    assert props == ("knn knn_type='hnsw' hnsw_similarity='cosine' hnsw_m='16' hnsw_ef_construction='200' "
                     f"model_name='{MODEL}' from='title,body' chunk_strategy='sentence' max_tokens='64' "
                     "overlap_tokens='8' max_chunks='16'")
    create = rows(con, "SHOW CREATE TABLE docs")[0][1]
    assert props.removeprefix("knn ") in create          # the options as SHOW CREATE TABLE prints them


def test_the_catalog_survives_a_reopen(db_path):
    con = tesseradb.connect(db_path)
    con.execute(ALL_TYPES)
    con.execute("INSERT INTO everything (id, g, h, x, y) VALUES (1, true, '[1]', (1,2,2), [[1,0,0,0,0,0,0,0]])")
    con.commit()
    created = show_create(con, "everything")
    con.close()
    con = tesseradb.connect(db_path)
    assert show_create(con, "everything") == created
    assert rows(con, "SELECT g, h, x FROM everything") == [(True, [1], [pytest.approx(1 / 3), pytest.approx(2 / 3),
                                                                       pytest.approx(2 / 3)])]
    assert rows(con, "SELECT id, knn_dist() FROM everything WHERE knn(y, 1, (1,0,0,0,0,0,0,0))") == [(1, 0.0)]
    con.close()


@pytest.mark.parametrize("column, message", [
    ("v float_vector knn_type='hnsw' knn_dims='3'", "knn_dims and hnsw_similarity are required if knn_type='hnsw'"),
    ("v float_vector knn_type='hnsw' hnsw_similarity='l2'", "knn_dims and hnsw_similarity are required"),
    ("v float_vector knn_type='hnsw' knn_dims='3' hnsw_similarity='manhattan'", "Unknown knn similarity 'MANHATTAN'"),
    ("v float_vector knn_type='ivf' knn_dims='3' hnsw_similarity='l2'", "Unknown KNN type 'IVF'"),
    ("n int knn_type='hnsw'", "knn_type='hnsw' can only be used with float_vector and float_vector_array attributes"),
    ("n int chunk_strategy='sentence'", "chunk_strategy, max_tokens, overlap_tokens and max_chunks can only be used "
                                        "with float_vector and float_vector_array attributes"),
    ("v float_vector_array chunk_strategy='sentence'", "require knn_type='hnsw'"),
    ("v float_vector_array knn_type='hnsw' knn_dims='4' hnsw_similarity='l2' chunk_strategy='sentence'",
     "require model_name; explicitly supplied vectors are never chunked"),
])
def test_bad_vector_column_definitions(con, column, message):
    with pytest.raises(tesseradb.ProgrammingError) as info:
        con.execute(f"CREATE TABLE t (title text, {column})")
    assert message in info.value.msg
    assert info.value.errno == 1064
    assert rows(con, "SHOW TABLES") == []


def test_create_if_not_exists_keeps_the_old_table(con):
    con.execute("CREATE TABLE t (a int)")
    con.execute("INSERT INTO t (a) VALUES (1)")
    con.execute("CREATE TABLE IF NOT EXISTS t (b text)")
    assert [r[0] for r in rows(con, "DESCRIBE t")] == ["id", "a"]
    assert rows(con, "SELECT a FROM t") == [(1,)]


def test_table_names_are_case_insensitive(con):
    con.execute("CREATE TABLE Docs (a int)")
    con.execute("INSERT INTO docs (a) VALUES (1)")
    con.execute("INSERT INTO DOCS (a) VALUES (2)")
    assert rows(con, "SELECT COUNT(*) FROM dOcS") == [(2,)]
    assert rows(con, "SHOW TABLES") == [("Docs",)]
    assert rows(con, "SHOW CREATE TABLE docs")[0][0] == "Docs"


def test_alter_add_column_fills_existing_rows(con):
    con.execute("CREATE TABLE t (a text)")
    con.execute("INSERT INTO t (a) VALUES ('x'), ('y')")
    con.execute("ALTER TABLE t ADD COLUMN n int")
    con.execute("ALTER TABLE t ADD COLUMN s float_vector")
    con.execute("ALTER TABLE t ADD COLUMN arr float_vector_array")
    assert rows(con, "SELECT a, n, s, arr FROM t ORDER BY id") == [("x", None, None, []), ("y", None, None, [])]
    assert "  `arr` float_vector_array\n" in show_create(con, "t")


def test_alter_refuses_bad_columns_and_changes_nothing(con):
    con.execute("CREATE TABLE t (a text)")
    with pytest.raises(tesseradb.ProgrammingError, match="knn_dims and hnsw_similarity are required"):
        con.execute("ALTER TABLE t ADD COLUMN v float_vector knn_type='hnsw'")
    with pytest.raises(tesseradb.ProgrammingError, match="unknown column type 'money'"):
        con.execute("ALTER TABLE t ADD COLUMN m money")
    assert [r[0] for r in rows(con, "DESCRIBE t")] == ["id", "a"]


def test_drop_column_keeps_the_other_data(con):
    con.execute("CREATE TABLE t (a text, b int, v float_vector_array knn_type='hnsw' knn_dims='1' hnsw_similarity='l2')")
    con.execute("INSERT INTO t (id, a, b, v) VALUES (1, 'x', 1, [[1]]), (2, 'y', 2, [[2]])")
    con.execute("ALTER TABLE t DROP COLUMN b")
    assert rows(con, "SELECT * FROM t ORDER BY id") == [(1, "x", [[1.0]]), (2, "y", [[2.0]])]
    assert rows(con, "SELECT id FROM t WHERE knn(v, 1, (2))") == [(2,)]


def test_truncate_empties_a_vector_table_and_ids_start_again(con):
    con.execute("CREATE TABLE t (v float_vector_array knn_type='hnsw' knn_dims='1' hnsw_similarity='l2')")
    con.execute("INSERT INTO t (v) VALUES ([[1]]), ([[2]])")
    con.commit()
    assert rows(con, "SELECT id FROM t WHERE knn(v, 5, (0))") == [(1,), (2,)]
    con.execute("TRUNCATE TABLE t")
    assert rows(con, "SELECT COUNT(*) FROM t") == [(0,)]
    assert rows(con, "SELECT id FROM t WHERE knn(v, 5, (0))") == []
    con.execute("INSERT INTO t (v) VALUES ([[3]])")
    con.commit()
    assert rows(con, "SELECT id, knn_dist() FROM t WHERE knn(v, 5, (0))") == [(1, 9.0)]


def test_drop_several_tables_is_all_or_nothing(con):
    con.execute("CREATE TABLE a (x int)")
    con.execute("CREATE TABLE b (x int)")
    with pytest.raises(tesseradb.ProgrammingError, match="table 'nope' does not exist"):
        con.execute("DROP TABLE a, nope, b")
    assert rows(con, "SHOW TABLES") == [("a",), ("b",)]
    con.execute("DROP TABLE IF EXISTS a, nope, b")
    assert con.warnings == [("Note", 1051, "Unknown table 'nope'")]      # of the last statement
    assert rows(con, "SHOW WARNINGS") == [("Note", 1051, "Unknown table 'nope'")]
    assert rows(con, "SHOW TABLES") == []
    assert con.warnings == []


def test_show_tables_like(con):
    for name in ("docs", "docs_old", "notes", "Dx"):
        con.execute(f"CREATE TABLE {name} (a int)")
    assert rows(con, "SHOW TABLES") == [("Dx",), ("docs",), ("docs_old",), ("notes",)]
    assert rows(con, "SHOW TABLES LIKE 'docs%'") == [("docs",), ("docs_old",)]
    assert rows(con, "SHOW TABLES LIKE 'd_'") == [("Dx",)]
    assert rows(con, "SHOW TABLES LIKE '%o%s'") == [("docs",), ("notes",)]


def test_ddl_statements_report_no_result_set(con):
    cur = con.execute("CREATE TABLE t (a int)")
    assert cur.description is None and cur.rowcount == 0
    cur = con.execute("ALTER TABLE t ADD COLUMN b int")
    assert cur.description is None
    cur = con.execute("TRUNCATE TABLE t")
    assert cur.description is None
