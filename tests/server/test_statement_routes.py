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
          "'unterminated", "é", "\t", "\n", "\x0c", "users", "system", "schemas", "x'75736572'"]
texts = st.lists(st.sampled_from(PIECES), max_size=12).map(" ".join) | st.text(max_size=40)


@settings(max_examples=400, deadline=None)
@given(texts, st.sampled_from(["", "  ", "\n", " \t"]))
def test_the_shortcut_reads_a_text_as_the_tokens_do(text, pad):
    sql = pad + text + pad
    assert [(s.text, s.route) for s in statements.read(sql)] == [(s.text, s.route) for s in statements.split(sql)]


def test_a_knn_query_is_not_tokenized_by_the_server():
    sql = "SELECT id FROM manual WHERE knn(v, 10, 'How to configure replication')"
    stmt = statements._plain_engine_statement(sql)
    assert stmt is not None and stmt.route == Route.ENGINE and stmt.text == sql


def test_what_clients_probe_still_reaches_the_probes():
    for sql, route in [("SELECT @@version_comment LIMIT 1", Route.PROBE), ("SELECT DATABASE()", Route.PROBE),
                       ("select user()", Route.PROBE), ("SELECT * FROM information_schema.tables", Route.INFO_SCHEMA),
                       ("SET NAMES utf8mb4", Route.SET), ("USE docs", Route.USE), ("SHOW DATABASES", Route.PROBE),
                       ("SELECT @x", Route.ENGINE)]:
        assert statements._plain_engine_statement(sql) is None
        assert [s.route for s in statements.read(sql)] == [route]


def test_several_statements_or_comments_take_the_tokens_way():
    assert [s.text for s in statements.read("SELECT 1; SELECT 2")] == ["SELECT 1", "SELECT 2"]
    assert [s.text for s in statements.read("SELECT 1 -- note")] == ["SELECT 1"]
    assert statements.read("  -- only a comment") == []
