"""Edges of the interactive shell in a real terminal (pexpect, issue 36): vectors abbreviated in ``\\G``
output as in tables (batch output stays exact), several statements before a custom delimiter run in
order, and a line that wraps on screen is one line being edited, not a ``->`` continuation."""
from __future__ import annotations

import re

import pexpect

from tests.shell.conftest import PROMPT

VECTORS = ("CREATE TABLE t (title text, v float_vector knn_type='hnsw' knn_dims='8' hnsw_similarity='l2');",
           "INSERT INTO t (id, title, v) VALUES (1, 'one', (0.11, 0.22, 0.33, 0.44, 0.55, 0.66, 0.77, 0.88));")


def test_vertical_output_abbreviates_vectors_interactively(terminal, run, tmp_path):
    term = terminal(str(tmp_path / "v.db"))
    for sql in VECTORS:
        term.run(sql)
    out = term.run("SELECT id, v FROM t\\G")
    assert "*************************** 1. row ***************************" in out
    assert re.search(r" v: 0\.110*,0\.220*,0\.330*,\.\.\. \(8 dims\)", out), out
    assert "0.88" not in out
    assert "Vectors print in full." in term.run("vectors full")
    full = term.run("SELECT id, v FROM t\\G")
    assert re.search(r" v: 0\.110*,0\.220*,0\.330*,0\.440*,0\.550*,0\.660*,0\.770*,0\.880*\s", full), full
    term.run("quit", until="Bye")
    batch = run(str(tmp_path / "v.db"), "-e", "SELECT v FROM t\\G")
    assert re.search(r"v: 0\.110*,0\.220*,0\.330*,0\.440*,0\.550*,0\.660*,0\.770*,0\.880*\n", batch.stdout), \
        batch.stdout                                                       # -e output stays exact


def test_statements_before_a_custom_delimiter_run_in_order(terminal):
    term = terminal()
    term.run("delimiter //")
    out = term.run("SELECT 1 AS first; SELECT 2 AS second//")
    assert "ERROR" not in out
    assert out.index("| first |") < out.index("| second |")
    assert "|     1 |" in out and "|      2 |" in out
    term.run("delimiter ;")
    assert "| 3 |" in term.run("SELECT 3;")


def test_a_line_wrapped_on_screen_is_one_line_being_edited(terminal):
    term = terminal()
    term.child.setwinsize(50, 60)
    long_select = "SELECT " + " + ".join(["1"] * 60) + " AS total;"       # ~250 characters: 5 screen rows
    term.child.send(long_select[:-1])
    shown = term.expect(pexpect.TIMEOUT, timeout=5)                        # what the screen shows while typing
    assert shown.count("+ 1") > 40                                         # the line was drawn
    assert "->" not in shown                                               # no continuation prompt
    out = term.run(";", until=r"1 row in set")
    assert re.search(r"\|\s+60 \|", out), out
