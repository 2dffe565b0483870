"""Pure parts of the shell: the statement scanner, value and table rendering, the progress line."""
from __future__ import annotations

import io

import pytest

from tesseradb.clients.shell import render
from tesseradb.clients.shell.progress import Progress, line
from tesseradb.clients.shell.scanner import Command, Scanner, Statement, is_complete, split_script


# -- scanner ------------------------------------------------------------------------------------------
def test_statements_and_their_lines():
    items = split_script("-- intro\nSELECT 1;\n\nSELECT\n  2;SELECT 3\\G\n")
    assert items == [Statement("SELECT 1", 2), Statement("SELECT\n  2", 4), Statement("SELECT 3", 5, True)]


@pytest.mark.parametrize("script, text", [
    ("SELECT 'a;b';", "SELECT 'a;b'"),
    ("SELECT \"a;b\";", 'SELECT "a;b"'),
    ("SELECT `a;b` FROM t;", "SELECT `a;b` FROM t"),
    ("SELECT 'it''s;';", "SELECT 'it''s;'"),
    ("SELECT 'back\\';slash';", "SELECT 'back\\';slash'"),
    ("SELECT 1 /* ; */;", "SELECT 1 /* ; */"),
    ("SELECT 1 -- ;\n;", "SELECT 1 -- ;"),
    ("SELECT 1 # ;\n;", "SELECT 1 # ;"),
    ("SELECT 'x\\G';", "SELECT 'x\\G'"),
])
def test_quotes_and_comments_hide_terminators(script, text):
    assert split_script(script) == [Statement(text, 1)]


def test_double_dash_needs_a_space_to_start_a_comment():
    assert split_script("SELECT 5--1;") == [Statement("SELECT 5--1", 1)]


def test_client_commands():
    items = split_script("source a.sql\n\\. b.sql\nSOURCE c.sql;\nhelp\n\\h\nexit\nquit;\n\\q\nstatus\n")
    assert [(i.name, i.arg) for i in items] == [
        ("source", "a.sql"), ("source", "b.sql"), ("source", "c.sql"), ("help", ""), ("help", ""),
        ("quit", ""), ("quit", ""), ("quit", ""), ("status", "")]
    assert all(isinstance(i, Command) for i in items)


def test_words_inside_a_statement_are_not_commands():
    assert split_script("SELECT\nsource FROM t;") == [Statement("SELECT\nsource FROM t", 1)]


def test_backslash_c_clears():
    assert split_script("SELECT 1 \\c SELECT 2;") == [Statement("SELECT 2", 1)]


def test_unterminated_statement_runs_at_end_of_input():
    assert split_script("SELECT 1;\nSELECT 2") == [Statement("SELECT 1", 1), Statement("SELECT 2", 2)]


def test_incremental_feeding_and_prompt_state():
    scanner = Scanner()
    assert scanner.feed("SELECT 'abc\n") == []
    assert scanner.pending and scanner.prompt_state == "'>"
    assert scanner.feed("def';\n") == [Statement("SELECT 'abc\ndef'", 1)]
    assert not scanner.pending


@pytest.mark.parametrize("text, complete", [
    ("SELECT 1;", True), ("SELECT 1", False), ("SELECT 1\\G", True), ("SELECT ';", False),
    ("", True), ("exit", True), ("source x.sql", True), ("SELECT 1 \\c", True), ("/* open", False),
    ("SELECT 1; SELECT", False),
])
def test_is_complete(text, complete):
    assert is_complete(text) is complete


# -- rendering -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("value, decl, text", [
    (None, None, "NULL"),
    (True, "BOOL_INT", "1"),
    (False, None, "0"),
    ([0.1, 0.2], "FLOAT_VECTOR_BLOB", "0.100000,0.200000"),
    ([[1.0, 0.0], [0.5, 0.25]], "FLOAT_VECTOR_ARRAY_BLOB", "[[1.000000,0.000000],[0.500000,0.250000]]"),
    ([], "FLOAT_VECTOR_ARRAY_BLOB", "[]"),
    ({"a": [1, "é"]}, "JSON_TEXT", '{"a": [1, "é"]}'),
    ("text", "JSON_TEXT", '"text"'),
    (0.1, "REAL", "0.1"),
    (2.0, None, "2"),
    (0.30000000000000004, None, "0.3"),
    (0.2950632572174072, None, "0.29506326"),     # exactly a float32
    (b"\x01\xff", None, "0x01FF"),
    (12, "INTEGER", "12"),
])
def test_cell_text(value, decl, text):
    assert render.cell(value, decl) == text


def test_display_width_counts_wide_and_combining_characters():
    assert render.width("abc") == 3
    assert render.width("日本") == 4
    assert render.width("e\u0301") == 1
    assert render.width("a\nb") == 2


def test_table_aligns_wide_text_and_numbers():
    out = render.table(["名", "n"], [None, None], [("日本", 1), ("a", 10)])
    assert out.splitlines() == [
        "+------+----+",
        "| 名   | n  |",
        "+------+----+",
        "| 日本 |  1 |",
        "| a    | 10 |",
        "+------+----+",
    ]


def test_vertical_layout():
    assert render.vertical(["id", "title"], [None, None], [(1, "x")]).splitlines() == [
        "*************************** 1. row ***************************",
        "   id: 1",
        "title: x",
    ]


def test_tab_separated_escapes_like_mysql_batch():
    out = render.tab_separated(["a"], [None], [("x\ty\nz\\",), (None,)])
    assert out == "a\nx\\ty\\nz\\\\\nNULL"


@pytest.mark.parametrize("kw, text", [
    (dict(rows=1, affected=None, warnings=0, seconds=0.013), "1 row in set (0.01 sec)"),
    (dict(rows=3, affected=None, warnings=0, seconds=0.0), "3 rows in set (0.00 sec)"),
    (dict(rows=0, affected=None, warnings=0, seconds=0.0), "Empty set (0.00 sec)"),
    (dict(rows=None, affected=1, warnings=0, seconds=0.5), "Query OK, 1 row affected (0.50 sec)"),
    (dict(rows=None, affected=-1, warnings=2, seconds=None), "Query OK, 0 rows affected, 2 warnings"),
    (dict(rows=None, affected=5, warnings=0, seconds=62.5), "Query OK, 5 rows affected (1 min 2.50 sec)"),
])
def test_summary_lines(kw, text):
    assert render.summary(**kw) == text


# -- progress -------------------------------------------------------------------------------------------
def test_progress_line_text():
    assert line(50, 200, 10.0) == ("Embedding: 50/200 chunks (25%), 5.0 chunks/s, ETA 0:30, elapsed 0:10")
    assert "1,500/3,000" in line(1500, 3000, 1.0)


def test_progress_waits_for_the_delay_then_logs():
    stream = io.StringIO()
    progress = Progress(stream, enabled=True, delay=3600)
    progress.start()
    progress.update(10, 100)
    progress.finish()
    assert stream.getvalue() == ""              # a quick statement shows nothing
    progress = Progress(stream, enabled=True, delay=0, interval=0)
    progress.start()
    for done in (10, 20, 5, 10):                # a second embedding pass restarts at 5
        progress.update(done, 20)
    progress.finish()
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("Embedding: 10/20 chunks")
    assert lines[-1].startswith("Embedding: 30/40 chunks")


def test_progress_disabled_is_silent():
    stream = io.StringIO()
    progress = Progress(stream, enabled=False, delay=0)
    progress.start()
    progress.update(1, 2)
    progress.finish()
    assert stream.getvalue() == ""


def test_go_ego_and_clear_alone_on_a_line():
    items = split_script("SELECT 1\ngo\nSELECT 2\nego\nSELECT 3\nclear\nSELECT 4;")
    assert items == [Statement("SELECT 1", 1), Statement("SELECT 2", 3, True), Statement("SELECT 4", 7)]


def test_progress_counts_consecutive_passes_of_one_statement():
    stream = io.StringIO()
    progress = Progress(stream, enabled=True, delay=0, interval=0)
    progress.start()
    for done, total in [(50, 50), (64, 100), (100, 100)]:     # two model columns, one after the other
        progress.update(done, total)
    progress.finish()
    assert stream.getvalue().splitlines()[-1].startswith("Embedding: 150/150 chunks")
