"""The interactive shell through a real pseudo-terminal (pexpect driving the installed ``tessera``)."""
from __future__ import annotations

import re

import pexpect

PROMPT = r"\x1b\[\?2004h"     # a new prompt starts (see conftest)

EMBED_TABLE = ("CREATE TABLE docs (body text, v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
               "model_name='Xenova/all-MiniLM-L6-v2' from='body' chunk_strategy='sentence' max_tokens='64');")
MANY_ROWS = ("INSERT INTO docs (body) WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n "
             "WHERE x < 5000) SELECT printf('Document %d is about topic %d. It has a second sentence.', "
             "x, x % 17) FROM n;")


def test_tables_counts_and_timing(terminal):
    term = terminal()
    out = term.run("SELECT 1 AS a, 'x' AS b;")
    assert "| a | b |" in out and "| 1 | x |" in out
    assert re.search(r"1 row in set \(\d+\.\d\d sec\)", out)
    out = term.run("CREATE TABLE t (a int, name text);")
    assert re.search(r"Query OK, 0 rows affected \(\d+\.\d\d sec\)", out)
    out = term.run("INSERT INTO t (a, name) VALUES (1, 'ü'), (2, NULL);")
    assert "Query OK, 2 rows affected" in out
    out = term.run("SELECT a, name FROM t ORDER BY a;")
    assert "|    2 | NULL |" in out or "| 2 | NULL |" in out
    assert "2 rows in set" in out
    assert "Empty set (" in term.run("SELECT a FROM t WHERE a > 5;")


def test_banner_and_in_memory_note(terminal):
    term = terminal()
    text = "".join(term.log)
    assert "Welcome to the tessera shell" in text
    assert "in-memory" in text


def test_multi_line_statement_runs_at_semicolon(terminal):
    term = terminal()
    term.child.sendline("SELECT 1 AS first,")
    term.expect("->")
    term.child.sendline("  2 AS second")
    term.expect("->")
    out = term.run(";")
    assert "| first | second |" in out


def test_vertical_output_with_backslash_g(terminal):
    term = terminal()
    out = term.run("SELECT 1 AS id, 'two' AS name\\G")
    assert "*************************** 1. row ***************************" in out
    assert "  id: 1" in out and "name: two" in out


def test_errors_are_reported_and_the_shell_keeps_going(terminal):
    term = terminal()
    out = term.run("SELEC 1;")
    assert "ERROR 1064 (42000): syntax error" in out
    assert "at line" not in out
    assert "ERROR 1146 (42S02): table 'nope' does not exist" in term.run("SELECT * FROM nope;")
    assert "| 3 |" in term.run("SELECT 3;")


def test_backslash_c_clears_the_input(terminal):
    term = terminal()
    term.child.sendline("SELECT 'discarded'")
    term.expect("->")
    out = term.run("\\c")
    assert "discarded |" not in out
    assert "| 4 |" in term.run("SELECT 4;")


def test_help_status_and_quit(terminal):
    term = terminal()
    out = term.run("help")
    assert "source" in out and "\\G" in out
    assert "Database:" in term.run("\\s")
    term.child.sendline("quit")
    term.expect("Bye")
    term.child.expect(pexpect.EOF)


def test_exit_and_backslash_q(terminal):
    for word in ("exit", "\\q"):
        term = terminal()
        term.child.sendline(word)
        term.expect("Bye")
        term.child.expect(pexpect.EOF)
        term.child.close()
        assert term.child.exitstatus == 0


def test_ctrl_d_exits(terminal):
    term = terminal()
    term.child.sendcontrol("d")
    term.expect("Bye")
    term.child.expect(pexpect.EOF)


def test_ctrl_c_at_the_prompt_clears_the_line(terminal):
    term = terminal()
    term.child.send("SELECT 'never run'")
    term.child.sendcontrol("c")
    term.expect(PROMPT)
    out = term.run("SELECT 5;")
    assert "never run |" not in out and "| 5 |" in out


def test_source_and_dot_commands(terminal, tmp_path):
    (tmp_path / "script.sql").write_text("CREATE TABLE s (a int);\nINSERT INTO s (a) VALUES (9);\n"
                                         "SELECT a FROM s;\n\nSELEC oops;\nSELECT 'still here' AS x;\n")
    term = terminal()
    out = term.run("source script.sql")
    assert "| 9 |" in out
    assert "ERROR 1064 (42000) at line 5 in file: 'script.sql':" in out
    assert "still here" in out
    out = term.run("\\. script.sql")
    assert "ERROR 1050 (42S01) at line 1 in file: 'script.sql'" in out


def test_ctrl_c_cancels_a_running_sql_statement(terminal):
    term = terminal()
    term.child.sendline("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n "
                        "WHERE x < 2000000000) SELECT COUNT(*) FROM n;")
    term.child.expect("COUNT")          # the echoed statement: it is running now
    import time
    time.sleep(1.0)
    term.child.sendcontrol("c")
    out = term.expect(PROMPT, timeout=30)
    assert "query aborted" in out
    assert "ERROR 1317 (70100): Query execution was interrupted" in out
    assert "| 6 |" in term.run("SELECT 6;")


def test_ctrl_c_cancels_embedding_and_rolls_back(terminal):
    term = terminal("--progress-delay", "0.2")
    assert "Query OK" in term.run(EMBED_TABLE)
    term.child.sendline(MANY_ROWS)
    term.expect(r"Embedding: [\d,]+/5,000 chunks", timeout=120)     # the progress line is visible
    term.child.sendcontrol("c")
    out = term.expect(PROMPT, timeout=60)
    assert "ERROR 1317 (70100): Query execution was interrupted" in out
    out = term.run("SELECT COUNT(*) AS n FROM docs;")
    assert "| 0 |" in out                                            # nothing was inserted


def test_history_is_kept_across_sessions(terminal, tmp_path):
    term = terminal()
    term.run("SELECT 4242 AS answer;")
    term.child.sendline("exit")
    term.child.expect(pexpect.EOF)
    assert "SELECT 4242 AS answer;" in (tmp_path / "history").read_text()
    again = terminal()
    again.child.send("\x1b[A")             # Up: "exit"
    again.child.send("\x1b[A")             # Up again: the statement before it
    again.child.send("\r")
    out = again.expect(PROMPT)
    assert re.search(r"\|\s+4242 \|", out), out


def test_completion_of_tables_and_columns_after_ddl(terminal):
    term = terminal()
    term.run("CREATE TABLE zebra_stripes (colour_name text, width int);")
    term.child.send("SELECT colour_")
    term.child.send("\t")
    term.child.send(" FROM zebra_")
    term.child.send("\t")
    out = term.run(";")
    assert "Empty set" in out, out
    term.run("ALTER TABLE zebra_stripes ADD COLUMN stripe_count int;")
    term.child.send("SELECT stripe_")
    term.child.send("\t")
    out = term.run(" FROM zebra_stripes;")
    assert "Empty set" in out, out


def test_keywords_complete_in_the_case_typed(terminal):
    term = terminal()
    term.child.send("SELECT 1 AS n UNI")
    term.child.expect("UNI")                 # typed (completion runs off the input thread) ...
    term.child.send("\t")
    term.child.expect("UNION")               # ... and completed before more is typed
    out = term.run(" ALL SELECT 2;")
    assert "2 rows in set" in out, out


def test_statements_are_highlighted_as_mysql(terminal):
    term = terminal()
    term.child.send("SELECT 'text' FROM dual")
    term.child.expect(r"\x1b\[[0-9;]*m(SELECT)")            # the keyword is drawn in a colour
    term.child.expect(r"\x1b\[[0-9;]*m('text')")            # and the string in another
    term.child.sendcontrol("c")
    term.expect(PROMPT)
