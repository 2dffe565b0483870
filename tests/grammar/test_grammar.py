"""grammar/: splitting scripts, the Lark DDL grammar, the sqlglot front end and what it refuses."""
from __future__ import annotations

import pytest

from tesseradb import grammar
from tesseradb.grammar import ast


# -- split ---------------------------------------------------------------------------------------
def texts(script):
    return [p.text for p in grammar.split(script)]


def test_split_on_semicolons():
    assert texts("SELECT 1; SELECT 2;SELECT 3") == ["SELECT 1", "SELECT 2", "SELECT 3"]


def test_split_respects_quotes_and_comments():
    script = ("SELECT 'a;b', \"c;d\", `e;f`; -- a comment; still a comment\n"
              "SELECT 2 /* block; comment */ ; # hash; comment\nSELECT 'it''s; fine'")
    assert texts(script) == ["SELECT 'a;b', \"c;d\", `e;f`", "SELECT 2",
                             "SELECT 'it''s; fine'"]


def test_split_drops_empty_statements_and_keeps_line_numbers():
    pieces = grammar.split(";;\n\nSELECT 1;\n  ;\nSELECT\n  2;\n-- only a comment\n")
    assert [(p.text, p.line) for p in pieces] == [("SELECT 1", 3), ("SELECT\n  2", 5)]
    assert grammar.split("") == []
    assert grammar.split("-- nothing\n/* at all */") == []


def test_split_of_an_unterminated_string_is_a_grammar_error():
    with pytest.raises(grammar.GrammarError):
        grammar.split("SELECT 'never closed; SELECT 2")


# -- the DDL grammar ------------------------------------------------------------------------------
def test_create_table_node():
    stmt = grammar.parse("CREATE TABLE IF NOT EXISTS `my docs` (title varchar(200), n int unsigned, "
                         "v float_vector_array KNN_TYPE='hnsw' knn_dims=4 Hnsw_Similarity=COSINE "
                         "from='title' model_name=\"x/y\");")
    assert isinstance(stmt, ast.CreateTable)
    assert stmt.table == "my docs" and stmt.if_not_exists
    title, n, v = stmt.columns
    assert (title.name, title.type, title.type_text, title.options) == ("title", "string", "varchar(200)", ())
    assert (n.type, n.type_text) == ("int", "int unsigned")
    assert v.type == "float_vector_array"
    assert v.options == (("knn_type", "hnsw"), ("knn_dims", "4"), ("hnsw_similarity", "COSINE"),
                         ("from", "title"), ("model_name", "x/y"))


@pytest.mark.parametrize("alias, canonical", sorted(grammar.TYPE_ALIASES.items()))
def test_type_aliases(alias, canonical):
    (col,) = grammar.parse(f"CREATE TABLE t (c {alias})").columns
    assert col.type == canonical


def test_keywords_are_case_insensitive():
    stmt = grammar.parse("create table T (A TEXT, b Float_Vector)")
    assert [(c.name, c.type) for c in stmt.columns] == [("A", "text"), ("b", "float_vector")]
    assert grammar.parse("drop table if exists a, B") == ast.DropTable(("a", "B"), True)


def test_option_values_with_escapes():
    (col,) = grammar.parse(r"CREATE TABLE t (v float_vector from='it''s \'quoted\' \n')").columns
    assert col.option_map["from"] == "it's 'quoted' \n"


@pytest.mark.parametrize("sql, node", [
    ("DROP TABLE a", ast.DropTable(("a",), False)),
    ("ALTER TABLE t ADD COLUMN c int", ast.AlterAddColumn("t", ast.ColumnDef("c", "int", "int"))),
    ("ALTER TABLE t ADD c int", ast.AlterAddColumn("t", ast.ColumnDef("c", "int", "int"))),
    ("ALTER TABLE t DROP COLUMN c", ast.AlterDropColumn("t", "c")),
    ("ALTER TABLE t DROP c", ast.AlterDropColumn("t", "c")),
    ("SHOW TABLES", ast.ShowTables()),
    ("SHOW TABLES LIKE 'a%'", ast.ShowTables("a%")),
    ("SHOW CREATE TABLE t", ast.TableCommand("show_create", "t")),
    ("DESCRIBE t", ast.TableCommand("describe", "t")),
    ("DESC t", ast.TableCommand("describe", "t")),
    ("SHOW COLUMNS FROM t", ast.ShowColumns("t")),
    ("TRUNCATE TABLE t", ast.TableCommand("truncate", "t")),
    ("TRUNCATE t", ast.TableCommand("truncate", "t")),
    ("OPTIMIZE TABLE t", ast.TableCommand("optimize", "t")),
    ("SHOW WARNINGS", ast.ShowWarnings()),
    ("BEGIN", ast.Transaction("begin")),
    ("BEGIN WORK", ast.Transaction("begin")),
    ("START TRANSACTION", ast.Transaction("begin")),
    ("COMMIT", ast.Transaction("commit")),
    ("COMMIT WORK", ast.Transaction("commit")),
    ("ROLLBACK", ast.Transaction("rollback")),
    ("rollback work;", ast.Transaction("rollback")),
    ("/* leading */ -- comment\n SHOW TABLES", ast.ShowTables()),
])
def test_extension_statements(sql, node):
    assert grammar.parse(sql) == node


@pytest.mark.parametrize("sql, message", [
    ("CREATE TABLE t (a int", "syntax error, unexpected end of statement"),
    ("CREATE TABLE t (a int) junk", "syntax error near 'junk'"),
    ("CREATE TABLE t ()", "syntax error near ')'"),
    ("CREATE TABLE t (a int,)", "syntax error near ')'"),
    ("CREATE TABLE t (a nosuch)", "unknown column type 'nosuch'"),
    ("DROP t", "syntax error"),
    ("SHOW NOTHING", "syntax error near 'NOTHING'"),
    ("", "syntax error, empty statement"),
    ("  ;  ", "syntax error, empty statement"),
])
def test_extension_syntax_errors(sql, message):
    with pytest.raises(grammar.GrammarError) as info:
        grammar.parse(sql)
    assert message in info.value.msg


def test_syntax_errors_know_where():
    with pytest.raises(grammar.GrammarError) as info:
        grammar.parse("CREATE TABLE t (\n  a int\n  b int)")
    assert (info.value.line, info.value.col) == (3, 5)     # 'b' reads as an option name; '=' is missing


# -- the sqlglot front end ------------------------------------------------------------------------
@pytest.mark.parametrize("sql, kind, replace", [
    ("SELECT 1", "select", False),
    ("(SELECT 1) UNION (SELECT 2)", "select", False),
    ("WITH x AS (SELECT 1) SELECT * FROM x", "select", False),
    ("SELECT 1 UNION ALL SELECT 2", "select", False),
    ("INSERT INTO t (a) VALUES (1)", "insert", False),
    ("INSERT INTO t SELECT * FROM u", "insert", False),
    ("REPLACE INTO t (a) VALUES (1)", "insert", True),
    ("replace t (a) values (1)", "insert", True),
    ("UPDATE t SET a = 1", "update", False),
    ("DELETE FROM t WHERE a = 1", "delete", False),
])
def test_query_kinds(sql, kind, replace):
    stmt = grammar.parse(sql)
    assert isinstance(stmt, ast.Query)
    assert (stmt.kind, stmt.replace) == (kind, replace)


def test_explain_wraps_the_statement():
    stmt = grammar.parse("EXPLAIN SELECT a FROM t")
    assert isinstance(stmt, ast.Explain) and stmt.statement.kind == "select"


def test_into_outfile_is_lifted_out():
    stmt = grammar.parse("SELECT a FROM t INTO OUTFILE 'out ''x''.csv'")
    assert stmt.outfile == "out 'x'.csv"
    assert "OUTFILE" not in stmt.expr.sql()
    with pytest.raises(grammar.GrammarError, match="INTO OUTFILE is only valid in SELECT"):
        grammar.parse("DELETE FROM t INTO OUTFILE 'x'")


@pytest.mark.parametrize("sql", [
    "FOO BAR", "SELEC 1", "SET ROLE x", "GRANT ALL ON t TO u", "CALL p()", "LOCK TABLES t",
    "ANALYZE TABLE t", "KILL 5", "HANDLER t OPEN", "PREPARE s FROM 'SELECT 1'", "EXECUTE s", "DO 1",
])
def test_statements_sqlglot_would_pass_through_as_commands_are_refused(sql):
    with pytest.raises(grammar.GrammarError) as info:
        grammar.parse(sql)
    assert info.value.msg.startswith("syntax error")


@pytest.mark.parametrize("sql, message", [
    ("SELECT 1; SELECT 2", "expected exactly one statement"),
    ("INSERT INTO t (a)", "syntax error, incomplete statement"),
    ("INSERT INTO t", "syntax error, incomplete statement"),
    ("UPDATE t SET", "syntax error, incomplete statement"),
    ("SELECT a FROM t WHERE", "syntax error, incomplete statement"),
    ("SELECT * FROM t LIMIT", "syntax error, incomplete statement"),
    ("SELECT 'open", "syntax error"),
])
def test_query_syntax_errors(sql, message):
    with pytest.raises(grammar.GrammarError) as info:
        grammar.parse(sql)
    assert message in info.value.msg


def test_placeholders_survive_parsing():
    stmt = grammar.parse("SELECT * FROM t WHERE a = ? AND b = :name")
    assert stmt.expr.sql(dialect="sqlite").count("?") + stmt.expr.sql(dialect="sqlite").count(":name") == 2


def test_mysql_functions_become_sqlite():
    sql = grammar.parse("SELECT CONCAT(a, b), IF(a, 1, 2) FROM t").expr.sql(dialect="sqlite")
    assert "||" in sql and "IIF(" in sql.upper() or "CASE" in sql.upper()


# -- LOAD DATA ... SYNC, INFILE ? -----------------------------------------------------------------
def test_load_data_sync_and_a_bound_path():
    assert grammar.parse("LOAD DATA LOCAL INFILE 'vault/**/*' SYNC INTO TABLE notes (path, body)") == \
        ast.LoadData(path="vault/**/*", table="notes", columns=("path", "body"), sync=True)
    assert grammar.parse("load data infile ? into table t") == ast.LoadData(path=ast.Placeholder(0), table="t")
    with pytest.raises(grammar.GrammarError):
        grammar.parse("LOAD DATA INFILE 'a.md' REPLACE SYNC INTO TABLE t")
