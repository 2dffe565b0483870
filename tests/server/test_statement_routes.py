"""The server's shortcut for a COM_QUERY text that can only be one statement for the engine
(statements.read): it must decide exactly what sqlglot's tokens decide, or leave the text to them."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from tesseradb.clients.server import statements
from tesseradb.clients.server.statements import Route

PIECES = ["SELECT", "select", "INSERT", "UPDATE", "DELETE", "SET", "USE", "SHOW", "KILL", "WITH", "FROM",
          "id", "manual", "knn", "(", ")", ",", ".", "10", "v", "'text'", "'it''s'", '"dq"', "`quoted`",
          "@x", "@@version_comment", "DATABASE", "database()", "USER()", "user", "version", "VERSION()",
          "information_schema", "mysql", "sys", "performance_schema", "tables", "CONNECTION_ID()",
          "current_schema", ";", "-- c\n", "# c\n", "/* c */", "\\'", "'\\\\'", "?", "=", "*", "WHERE",
          "'unterminated", "é", "\t", "\n", "\x0c", "users", "system", "schemas", "x'75736572'",
          # single-quoted strings holding what would route or split the text outside quotes
          "'user'", "'a; b'", "'-- c'", "'# c'", "'/* c */'", "'é'", "'mysql.user'", "'@@version'",
          "'\"'", "'`'", "\"it's\"", "`it's`", "\"a;b\"", "`--`", "'Version 6.2'", "'データベース'"]
texts = st.lists(st.sampled_from(PIECES), max_size=12).map(" ".join) | st.text(max_size=40)


@settings(max_examples=1000, deadline=None)
@given(texts, st.sampled_from(["", "  ", "\n", " \t"]))
def test_the_shortcut_reads_a_text_as_the_tokens_do(text, pad):
    sql = pad + text + pad
    assert [(s.text, s.route) for s in statements.read(sql)] == [(s.text, s.route) for s in statements.split(sql)]


def test_a_knn_query_is_not_tokenized_by_the_server():
    sql = "SELECT id FROM manual WHERE knn(v, 10, 'How to configure replication')"
    stmt = statements._plain_engine_statement(sql)
    assert stmt is not None and stmt.route == Route.ENGINE and stmt.text == sql


def test_a_knn_text_may_say_anything_without_being_tokenized():
    """The words routing looks for, a ';', a comment or another language inside the question."""
    for text in ["Which user owns the database schema?", "Version 6.2: mysql and sys tables", "a; b -- c # d /* e */",
                 "Wie richte ich die Replikation ein?", "レプリケーションの設定", "connection_id() and @@version"]:
        sql = "SELECT id FROM manual WHERE knn(v, 10, '" + text + "')"
        stmt = statements._plain_engine_statement(sql)
        assert stmt is not None and stmt.route == Route.ENGINE and stmt.text == sql
        assert [(s.text, s.route) for s in statements.split(sql)] == [(sql, Route.ENGINE)]


def test_what_clients_probe_still_reaches_the_probes():
    for sql, route in [("SELECT @@version_comment LIMIT 1", Route.PROBE), ("SELECT DATABASE()", Route.PROBE),
                       ("select user()", Route.PROBE), ("SELECT * FROM information_schema.tables", Route.INFO_SCHEMA),
                       ("SET NAMES utf8mb4", Route.SET), ("USE docs", Route.USE), ("SHOW DATABASES", Route.PROBE),
                       ("SELECT @x", Route.ENGINE), ("SELECT 'a', DATABASE()", Route.PROBE),
                       ("SELECT * FROM `mysql`.`user`", Route.INFO_SCHEMA), ("SELECT 'x' FROM \"sys\".t", Route.INFO_SCHEMA)]:
        assert statements._plain_engine_statement(sql) is None
        assert [s.route for s in statements.read(sql)] == [route]


def test_several_statements_or_comments_take_the_tokens_way():
    assert [s.text for s in statements.read("SELECT 1; SELECT 2")] == ["SELECT 1", "SELECT 2"]
    assert [s.text for s in statements.read("SELECT 1 -- note")] == ["SELECT 1"]
    assert statements.read("  -- only a comment") == []
