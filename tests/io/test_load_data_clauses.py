"""MySQL's LOAD DATA clauses (issue 22): FIELDS/COLUMNS TERMINATED / [OPTIONALLY] ENCLOSED / ESCAPED
BY, LINES STARTING / TERMINATED BY, IGNORE n LINES, a column list with @variables, SET col = expr,
LOCAL, REPLACE / IGNORE, CHARACTER SET. With any of them the file is delimited text whatever its
extension (docs/load_data.md#mysqls-fields-and-lines-clauses)."""
from __future__ import annotations

import pymysql
import pytest

import tesseradb
from tesseradb import errors


@pytest.fixture
def cur():
    conn = tesseradb.connect(":memory:")
    yield conn.cursor()
    conn.close()


def write(path, text: str, encoding: str = "utf-8") -> str:
    with open(path, "w", encoding=encoding, newline="") as f:
        f.write(text)
    return str(path)


def rows(cur, sql: str) -> list[tuple]:
    cur.execute(sql)
    return [tuple(r) for r in cur.fetchall()]


def warnings(cur) -> list[tuple]:
    return rows(cur, "SHOW WARNINGS")


def error(cur, sql: str, params=None) -> errors.Error:
    with pytest.raises(errors.Error) as info:
        cur.execute(sql, params)
    return info.value


# -- the statement, and what the clauses mean --------------------------------------------------
def test_csv_with_a_header_loads_with_fields_enclosed_and_ignore_1_lines(cur, tmp_path):
    path = write(tmp_path / "x.csv", 'name,qty\n"Widget, large",3\n"say ""hi""",4\n')
    cur.execute("CREATE TABLE t (name varchar(50), qty int)")
    cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE t FIELDS TERMINATED BY ',' ENCLOSED BY '\"' IGNORE 1 LINES")
    assert cur.rowcount == 2
    assert rows(cur, "SELECT name, qty FROM t ORDER BY qty") == [("Widget, large", 3), ('say "hi"', 4)]
    assert warnings(cur) == []


def test_a_txt_file_with_clauses_is_rows_not_a_document(cur, tmp_path):
    path = write(tmp_path / "people.txt", "ann\t31\nbob\t42\n")
    cur.execute("CREATE TABLE people (name text, age int)")
    cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE people LINES TERMINATED BY '\\n'")   # MySQL's defaults: tabs
    assert rows(cur, "SELECT name, age FROM people ORDER BY age") == [("ann", 31), ("bob", 42)]


def test_a_txt_file_without_clauses_stays_a_document(cur, tmp_path):
    path = write(tmp_path / "people.txt", "ann\t31\nbob\t42\n")
    cur.execute("CREATE TABLE notes (path text, body text)")
    cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE notes")
    assert rows(cur, "SELECT path, body FROM notes") == [("people.txt", "ann\t31\nbob\t42\n")]


def test_a_md_file_with_a_fields_clause_is_delimited_rows(cur, tmp_path):
    path = write(tmp_path / "table.md", "# not a heading|1\nplain|2\n")
    cur.execute("CREATE TABLE t (title text, n int)")
    cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE t FIELDS TERMINATED BY '|'")
    assert rows(cur, "SELECT title, n FROM t ORDER BY n") == [("# not a heading", 1), ("plain", 2)]


def test_columns_is_a_synonym_of_fields_and_local_is_accepted(cur, tmp_path):
    path = write(tmp_path / "a.dat", "1;one\n2;two\n")
    cur.execute("CREATE TABLE t (n int, word text)")
    cur.execute(f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE t CHARACTER SET utf8mb4 COLUMNS TERMINATED BY ';'")
    assert rows(cur, "SELECT n, word FROM t ORDER BY n") == [(1, "one"), (2, "two")]


# -- values: NULL, quoting, escapes ---------------------------------------------------------------------
def test_backslash_n_is_null_and_the_word_null_is_text(cur, tmp_path):
    path = write(tmp_path / "n.txt", "1\t\\N\n2\tNULL\n3\t\n")
    cur.execute("CREATE TABLE t (k int, s text)")
    cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE t FIELDS TERMINATED BY '\\t'")
    assert rows(cur, "SELECT k, s FROM t ORDER BY k") == [(1, None), (2, "NULL"), (3, "")]


def test_enclosed_fields_hold_separators_and_line_breaks(cur, tmp_path):
    path = write(tmp_path / "q.csv", '1,"a, b"\n2,"two\nlines"\n3,plain "inner" quotes\n')
    cur.execute("CREATE TABLE t (k int, s text)")
    cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE t FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"'")
    assert rows(cur, "SELECT k, s FROM t ORDER BY k") == [(1, "a, b"), (2, "two\nlines"), (3, 'plain "inner" quotes')]


def test_mysql_escapes_are_the_characters_they_name(cur, tmp_path):
    path = write(tmp_path / "e.txt", "1\ttab\\there\n2\tnew\\nline\n3\tback\\\\slash\n4\tsep\\\tinside\n"
                                     "5\tcontinued\\\nline\n")
    cur.execute("CREATE TABLE t (k int, s text)")
    cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE t FIELDS ESCAPED BY '\\\\'")
    assert rows(cur, "SELECT k, s FROM t ORDER BY k") == [
        (1, "tab\there"), (2, "new\nline"), (3, "back\\slash"), (4, "sep\tinside"), (5, "continued\nline")]


def test_an_escaped_quote_inside_an_enclosed_field(cur, tmp_path):
    path = write(tmp_path / "e.csv", '1,"she said \\"no\\""\n2,a\\,b\n')
    cur.execute("CREATE TABLE t (k int, s text)")
    cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE t FIELDS TERMINATED BY ',' ENCLOSED BY '\"'")
    assert rows(cur, "SELECT k, s FROM t ORDER BY k") == [(1, 'she said "no"'), (2, "a,b")]


def test_another_escape_character_and_none(cur, tmp_path):
    path = write(tmp_path / "e.txt", "1,a^,b\n2,^N\n3,\\N\n")
    cur.execute("CREATE TABLE t (k int, s text)")
    cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE t FIELDS TERMINATED BY ',' ESCAPED BY '^'")
    assert rows(cur, "SELECT k, s FROM t ORDER BY k") == [(1, "a,b"), (2, None), (3, "\\N")]
    cur.execute("DELETE FROM t")
    cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE t FIELDS TERMINATED BY ',' ESCAPED BY ''")
    assert warnings(cur) == [("Warning", 1262, "Row 1 was truncated; it contained more data than there were "
                                               "input columns")]                 # 'a^' then 'b' dropped
    assert rows(cur, "SELECT k, s FROM t ORDER BY k") == [(1, "a^"), (2, "^N"), (3, "\\N")]


# -- separators and lines ---------------------------------------------------------------------------------
def test_multi_character_separators_and_line_terminators(cur, tmp_path):
    path = write(tmp_path / "m.txt", "1||one|two;;2||x\ny;;")
    cur.execute("CREATE TABLE t (k int, s text)")
    cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE t FIELDS TERMINATED BY '||' LINES TERMINATED BY ';;'")
    assert rows(cur, "SELECT k, s FROM t ORDER BY k") == [(1, "one|two"), (2, "x\ny")]


def test_windows_lines_need_lines_terminated_by_crlf_as_in_mysql(cur, tmp_path):
    path = write(tmp_path / "w.csv", "1,a\r\n2,b\r\n")
    cur.execute("CREATE TABLE t (k int, s text)")
    cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE t FIELDS TERMINATED BY ',' LINES TERMINATED BY '\\r\\n'")
    assert rows(cur, "SELECT s FROM t ORDER BY k") == [("a",), ("b",)]
    cur.execute("DELETE FROM t")
    cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE t FIELDS TERMINATED BY ','")
    assert rows(cur, "SELECT s FROM t ORDER BY k") == [("a\r",), ("b\r",)]       # MySQL keeps the \r too


def test_lines_starting_by_skips_the_prefix_and_lines_without_it(cur, tmp_path):
    path = write(tmp_path / "p.txt", 'xxx"Row",1\nsomething xxx"Row",2\nno prefix,3\n')
    cur.execute("CREATE TABLE t (s text, n int)")
    cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE t FIELDS TERMINATED BY ',' ENCLOSED BY '\"' "
                "LINES STARTING BY 'xxx'")
    assert rows(cur, "SELECT s, n FROM t ORDER BY n") == [("Row", 1), ("Row", 2)]


def test_ignore_n_rows_skips_that_many_records(cur, tmp_path):
    path = write(tmp_path / "h.txt", "title line\nk\tv\n1\ta\n2\tb\n")
    cur.execute("CREATE TABLE t (k int, v text)")
    cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE t IGNORE 2 ROWS")
    assert rows(cur, "SELECT k, v FROM t ORDER BY k") == [(1, "a"), (2, "b")]


def test_character_set_reads_the_file_in_that_encoding(cur, tmp_path):
    path = write(tmp_path / "l.txt", "caf\u00e9\t1\n", encoding="cp1252")
    cur.execute("CREATE TABLE t (s text, n int)")
    cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE t CHARACTER SET latin1 FIELDS TERMINATED BY '\\t'")
    assert rows(cur, "SELECT s FROM t") == [("caf\u00e9",)]
    err = error(cur, f"LOAD DATA INFILE '{path}' INTO TABLE t CHARACTER SET klingon FIELDS TERMINATED BY ','")
    assert err.errno == 1115 and "klingon" in err.msg


def test_a_glob_with_clauses_loads_every_file(cur, tmp_path):
    write(tmp_path / "a.txt", "1,a\n")
    write(tmp_path / "b.txt", "2,b\n")
    cur.execute("CREATE TABLE t (k int, s text)")
    cur.execute(f"LOAD DATA INFILE '{tmp_path}/*.txt' INTO TABLE t FIELDS TERMINATED BY ','")
    assert rows(cur, "SELECT k, s FROM t ORDER BY k") == [(1, "a"), (2, "b")]


# -- the column list, @variables and SET ---------------------------------------------------------------------
def test_variables_and_set_compute_columns(cur, tmp_path):
    path = write(tmp_path / "o.csv", "id,first,last,qty,price\n7,Ada,Lovelace,3,1.50\n8,Alan,Turing,\\N,2\n")
    cur.execute("CREATE TABLE orders (name text, total double, qty int, shouted text)")
    cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE orders FIELDS TERMINATED BY ',' IGNORE 1 LINES "
                "(@skip, @first, @last, qty, @price) "
                "SET name = CONCAT(@first, ' ', @last), total = qty * @price, shouted = UPPER(@last)")
    assert rows(cur, "SELECT name, total, qty, shouted FROM orders ORDER BY name") == [
        ("Ada Lovelace", 4.5, 3, "LOVELACE"), ("Alan Turing", None, None, "TURING")]


def test_set_uses_session_variables_and_overrides_a_listed_column(cur, tmp_path):
    path = write(tmp_path / "s.txt", "1\ta\n2\tb\n")
    cur.execute("CREATE TABLE t (k int, s text)")
    cur.execute("SET @base = 100")
    cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE t (k, s) SET k = k + @base")
    assert rows(cur, "SELECT k, s FROM t ORDER BY k") == [(101, "a"), (102, "b")]


def test_columns_inside_a_subquery_of_set_are_that_tables(cur, tmp_path):
    path = write(tmp_path / "p.txt", "apple\t2\npear\t3\n")
    cur.execute("CREATE TABLE prices (name text, price double)")
    cur.execute("INSERT INTO prices (name, price) VALUES ('apple', 0.5), ('pear', 0.25)")
    cur.execute("CREATE TABLE basket (name text, total double)")
    cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE basket (@name, @n) "
                "SET name = @name, total = @n * (SELECT price FROM prices WHERE name = @name)")
    assert rows(cur, "SELECT name, total FROM basket ORDER BY name") == [("apple", 1.0), ("pear", 0.75)]


def test_file_values_are_bound_never_pasted_into_sql(cur, tmp_path):
    evil = "x'); DROP TABLE t; --"
    path = write(tmp_path / "evil.txt", f"{evil}\tIGNORE 1 LINES\n")
    cur.execute("CREATE TABLE t (a text, b text)")
    cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE t (@a, b) SET a = CONCAT(@a, 'SET b = 1')")
    assert rows(cur, "SELECT a, b FROM t") == [(evil + "SET b = 1", "IGNORE 1 LINES")]


def test_a_string_in_set_is_never_a_clause(cur, tmp_path):
    path = write(tmp_path / "s.txt", "1\n2\n")
    cur.execute("CREATE TABLE t (k int, note text)")
    cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE t (k) SET note = 'IGNORE 1 LINES; DROP TABLE t'")
    assert rows(cur, "SELECT k, note FROM t ORDER BY k") == [(1, "IGNORE 1 LINES; DROP TABLE t"),
                                                            (2, "IGNORE 1 LINES; DROP TABLE t")]


def test_a_declared_primary_key_is_named_by_its_name(cur, tmp_path):
    path = write(tmp_path / "k.txt", "0\tzero\n5\tfive\n")
    cur.execute("CREATE TABLE t (pk int PRIMARY KEY, s text)")
    cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE t FIELDS TERMINATED BY '\\t' (pk, s)")
    cur.execute(f"LOAD DATA INFILE '{path}' REPLACE INTO TABLE t FIELDS TERMINATED BY '\\t'")
    assert rows(cur, "SELECT pk, s FROM t ORDER BY pk") == [(0, "zero"), (5, "five")]


# -- wrong number of fields: MySQL's warnings ---------------------------------------------------------------
def test_missing_fields_take_defaults_and_extra_fields_are_dropped_with_warnings(cur, tmp_path):
    path = write(tmp_path / "w.txt", "a,1,x\nb\nc,3,z,extra\n")
    cur.execute("CREATE TABLE t (s text, n int DEFAULT 7, z text DEFAULT 'dflt')")
    cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE t FIELDS TERMINATED BY ','")
    assert cur.rowcount == 3
    assert warnings(cur) == [
        ("Warning", 1261, "Row 2 doesn't contain data for all columns"),
        ("Warning", 1262, "Row 3 was truncated; it contained more data than there were input columns")]
    assert rows(cur, "SELECT s, n, z FROM t ORDER BY s") == [("a", 1, "x"), ("b", 7, "dflt"), ("c", 3, "z")]


def test_row_numbers_of_warnings_count_after_the_ignored_lines(cur, tmp_path):
    path = write(tmp_path / "w.txt", "header\n1\ta\n2\n")
    cur.execute("CREATE TABLE t (k int, s text)")
    cur.execute(f"LOAD DATA INFILE '{path}' INTO TABLE t IGNORE 1 LINES")
    assert warnings(cur) == [("Warning", 1261, "Row 2 doesn't contain data for all columns")]


# -- REPLACE / IGNORE ----------------------------------------------------------------------------------------
def test_ignore_skips_rows_that_repeat_a_key_with_warnings(cur, tmp_path):
    path = write(tmp_path / "d.txt", "1\ta\n1\tb\n2\tc\n")
    cur.execute("CREATE TABLE t (k int PRIMARY KEY, v text)")
    cur.execute(f"LOAD DATA INFILE '{path}' IGNORE INTO TABLE t FIELDS TERMINATED BY '\\t'")
    assert cur.rowcount == 2
    assert warnings(cur) == [("Warning", 1062, "Duplicate entry '1' for key 'PRIMARY'")]
    cur.execute(f"LOAD DATA INFILE '{path}' REPLACE INTO TABLE t FIELDS TERMINATED BY '\\t'")
    assert rows(cur, "SELECT k, v FROM t ORDER BY k") == [(1, "b"), (2, "c")]


# -- errors: MySQL's, and nothing changed ------------------------------------------------------------------------
@pytest.mark.parametrize("clause", ["FIELDS ESCAPED BY '\\\\\\\\'", "FIELDS ENCLOSED BY '\"\"'",
                                    "FIELDS TERMINATED BY '\\n'"])
def test_bad_separators_are_error_1083(cur, tmp_path, clause):
    path = write(tmp_path / "a.txt", "1\n")
    cur.execute("CREATE TABLE t (k int)")
    err = error(cur, f"LOAD DATA INFILE '{path}' INTO TABLE t {clause}")
    assert (err.errno, err.sqlstate) == (1083, "42000")
    assert err.msg == "Field separator argument is not what is expected; check the manual"


@pytest.mark.parametrize("tail", ["(k, nope)", "(k, @x) SET nope = @x", "(@x) SET k = nope + 1"])
def test_unknown_columns_are_error_1054(cur, tmp_path, tail):
    path = write(tmp_path / "a.txt", "1\t2\n")
    cur.execute("CREATE TABLE t (k int, s text)")
    err = error(cur, f"LOAD DATA INFILE '{path}' INTO TABLE t {tail}")
    assert err.errno == 1054 and "Unknown column 'nope' in 'field list'" in err.msg
    assert rows(cur, "SELECT COUNT(*) FROM t") == [(0,)]


def test_a_bad_value_loads_nothing_and_names_the_line(cur, tmp_path):
    path = write(tmp_path / "b.csv", '1,a\n2,"two\nlines"\nthree,c\n')
    cur.execute("CREATE TABLE t (k int, s text)")
    cur.execute("INSERT INTO t VALUES (9, 'kept')")
    err = error(cur, f"LOAD DATA INFILE '{path}' INTO TABLE t FIELDS TERMINATED BY ',' ENCLOSED BY '\"'")
    assert err.errno == 1366 and "line 4, column 'k': Incorrect integer value: 'three'" in err.msg
    assert rows(cur, "SELECT k, s FROM t") == [(9, "kept")]


def test_set_syntax_errors_are_1064(cur, tmp_path):
    path = write(tmp_path / "a.txt", "1\n")
    cur.execute("CREATE TABLE t (k int, s text)")
    for tail in ["SET s = 1 WHERE k = 1", "SET s = 1; DROP TABLE t", "SET t.s = 1"]:
        assert error(cur, f"LOAD DATA INFILE '{path}' INTO TABLE t (k) {tail}").errno == 1064
    assert rows(cur, "SELECT COUNT(*) FROM t") == [(0,)]


def test_ignore_on_documents_and_sync_with_clauses_are_refused(cur, tmp_path):
    write(tmp_path / "a.md", "# A\n")
    cur.execute("CREATE TABLE t (path text UNIQUE, body text)")
    assert error(cur, f"LOAD DATA INFILE '{tmp_path}/a.md' IGNORE INTO TABLE t").errno == 1235
    assert error(cur, f"LOAD DATA INFILE '{tmp_path}/*.md' SYNC INTO TABLE t FIELDS TERMINATED BY ','").errno == 1235


# -- over the wire ---------------------------------------------------------------------------------------------------
def test_the_server_loads_with_clauses_inside_secure_file_priv(tmp_path):
    allowed = tmp_path / "files"
    allowed.mkdir()
    write(allowed / "people.txt", "name,age\n\"Ann, Jr.\",31\nbob\n")
    srv = tesseradb.serve(str(tmp_path / "docs.db"), port=0, secure_file_priv=str(allowed), background=True)
    try:
        with pymysql.connect(host="127.0.0.1", port=srv.port, user="app", database="docs",
                             autocommit=True) as c, c.cursor() as cur:
            cur.execute("CREATE TABLE people (name text, age int DEFAULT 18)")
            cur.execute(f"LOAD DATA INFILE '{allowed}/people.txt' INTO TABLE people FIELDS TERMINATED BY ',' "
                        "ENCLOSED BY '\"' IGNORE 1 LINES (name, @age) SET age = @age + 1")
            assert cur.rowcount == 2
            cur.execute("SHOW WARNINGS")
            assert [tuple(r) for r in cur.fetchall()] == [("Warning", 1261, "Row 2 doesn't contain data for all columns")]
            cur.execute("SELECT name, age FROM people ORDER BY name")
            assert [tuple(r) for r in cur.fetchall()] == [("Ann, Jr.", 32), ("bob", None)]
            with pytest.raises(pymysql.err.MySQLError) as info:
                cur.execute(f"LOAD DATA INFILE '{tmp_path}/secret.txt' INTO TABLE people FIELDS TERMINATED BY ','")
            assert info.value.args[0] == 1290
    finally:
        srv.stop()


# -- the grammar ---------------------------------------------------------------------------------------------------
def test_the_clauses_parse_into_the_ast():
    from tesseradb.grammar import ast, ddl
    stmt = ddl.parse_extension(
        "load data low_priority local infile 'a.txt' replace into table t character set utf8mb4 "
        "columns terminated by '\\t' optionally enclosed by '\"' escaped by '\\\\' "
        "lines starting by 'xx' terminated by '\\r\\n' ignore 2 rows (a, @B, `c`) set d = upper(@b)")
    assert (stmt.path, stmt.table, stmt.replace, stmt.ignore, stmt.charset) == ("a.txt", "t", True, False, "utf8mb4")
    assert stmt.fields == ast.LoadFields(terminated="\t", enclosed='"', escaped="\\", optionally=True)
    assert stmt.lines == ast.LoadLines(starting="xx", terminated="\r\n")
    assert stmt.ignore_lines == 2 and stmt.columns == ("a", ast.UserVar("b"), "c")
    assert [(name, expr.sql(dialect="mysql")) for name, expr in stmt.assignments] == [("d", "UPPER(@b)")]
    plain = ddl.parse_extension("LOAD DATA INFILE 'x.md' INTO TABLE t (path, title)")
    assert (plain.fields, plain.lines, plain.ignore_lines, plain.assignments) == (None, None, None, ())
