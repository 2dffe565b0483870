"""mysql client commands in the shell (pager, tee, system, delimiter, prompt, charset, ...) and the
abbreviated vectors of interactive tables; unsupported commands are refused, never sent as SQL."""
from __future__ import annotations

import re
from pathlib import Path

VECTOR_TABLE = ("CREATE TABLE vt (name string, v float_vector knn_type='hnsw' knn_dims='8' "
                "hnsw_similarity='l2', a float_vector_array knn_type='hnsw' knn_dims='8' hnsw_similarity='l2');")
VECTOR_ROW = ("INSERT INTO vt (id, name, v, a) VALUES (1, 'x', (0.5, 0.25, 0.125, 1, 2, 3, 4, 5), "
              "[[1, 0, 0, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0, 0, 0]]);")
FULL_V = "0.500000,0.250000,0.125000,1.000000,2.000000,3.000000,4.000000,5.000000"


def test_pager_from_environment_and_nopager(shell_env, terminal):
    shell_env["PAGER"] = "tr a-z A-Z"
    term = terminal()
    assert "PAGER set to 'tr a-z A-Z'" in term.run("pager")
    out = term.run("SELECT 'quiet words' AS said;")
    assert "| QUIET WORDS |" in out and "1 ROW IN SET" in out
    assert "PAGER set to stdout" in term.run("nopager")
    assert "| quiet words |" in term.run("SELECT 'quiet words' AS said;")


def test_pager_does_not_swallow_the_next_statement(terminal, tmp_path):
    """The issue's accident: after `pager less` the BEGIN typed next was lost and ROLLBACK did nothing."""
    term = terminal(str(tmp_path / "p.db"))
    term.run("CREATE TABLE p (a int);")
    term.run("INSERT INTO p (a) VALUES (1);")
    assert "PAGER set to 'cat > paged.txt'" in term.run("pager cat > paged.txt")
    term.run("BEGIN;")
    term.run("DELETE FROM p;")
    term.run("ROLLBACK;")
    term.run("SELECT COUNT(*) AS n FROM p;")
    assert "| 1 |" in (tmp_path / "paged.txt").read_text()      # the last result went through the pager
    term.run("\\n")
    assert "| 1 |" in term.run("SELECT COUNT(*) AS n FROM p;")


def test_backslash_pager_with_a_redirection(terminal, tmp_path):
    term = terminal()
    assert "PAGER set to 'cat > out.txt'" in term.run("\\P cat > out.txt")
    out = term.run("SELECT 41 + 1 AS answer;")
    assert "| answer |" not in out
    text = (tmp_path / "out.txt").read_text()
    assert "| answer |" in text and "|     42 |" in text and "1 row in set" in text


def test_tee_records_statements_results_and_errors(terminal, tmp_path):
    term = terminal()
    assert "Logging to file 'session.log'" in term.run("tee session.log")
    term.run("SELECT 'teed' AS t;")
    term.run("SELECT * FROM missing;")
    assert "Outfile disabled." in term.run("notee")
    term.run("SELECT 'not teed' AS u;")
    log = (tmp_path / "session.log").read_text()
    assert "tessera> SELECT 'teed' AS t;" in log and "| teed |" in log
    assert "ERROR 1146 (42S02): table 'missing' does not exist" in log
    assert "not teed" not in log
    assert "Logging to file 'session.log'" in term.run("\\T")        # no name: the last file again


def test_system_commands(terminal):
    term = terminal()
    assert "hello-from-sh" in term.run("\\! echo hello-from-sh")
    assert "second-one" in term.run("system echo second-one")


def test_delimiter_for_multi_statement_bodies(terminal):
    term = terminal()
    term.run("delimiter //")
    term.child.sendline("SELECT 'a;b' AS x;")
    term.expect("->")                         # ; does not end the statement any more
    out = term.run("//")
    assert "| a;b |" in out
    assert "| 7 |" in term.run("SELECT 7 //")
    term.run("delimiter ;")
    assert "| 8 |" in term.run("SELECT 8;")


def test_prompt_with_escapes(terminal):
    term = terminal()
    assert "PROMPT set to 'db=\\d [\\c]> '" in term.run("prompt db=\\d [\\c]> ")
    term.child.sendline("SELECT 1;")
    term.expect(r"db=main \[2\]>")
    assert "Returning to default PROMPT" in term.run("prompt")


def test_charset_use_print_and_unsupported_commands(terminal):
    term = terminal()
    assert "Charset changed" in term.run("charset utf8mb4")
    assert "Unknown character set: 'latin1'" in term.run("\\C latin1")
    for word in ("connect", "\\e", "edit", "resetconnection"):
        name = {"\\e": "edit"}.get(word, word)
        out = term.run(word)
        assert f"ERROR: command '{name}' is not supported" in out
    assert "| 9 |" in term.run("SELECT 9;")       # nothing was left in the statement buffer
    out = term.run("SELECT 'typed so far' \\p")
    assert "--------------\nSELECT 'typed so far'\n--------------" in out
    assert "| typed so far |" in term.run(" AS more;")      # the statement is still being typed


def test_vectors_are_abbreviated_in_interactive_tables(terminal):
    term = terminal()
    term.run(VECTOR_TABLE)
    term.run(VECTOR_ROW)
    out = term.run("SELECT v, a FROM vt;")
    assert "| 0.500000,0.250000,0.125000,... (8 dims) | [2 vectors of 8 dims] |" in out
    assert FULL_V not in out
    shown = term.run("SELECT v FROM vt\\G")                         # \G abbreviates too (issue 36)
    assert "v: 0.500000,0.250000,0.125000,... (8 dims)" in shown and FULL_V not in shown
    assert "Vectors print in full." in term.run("vectors")          # the toggle
    assert FULL_V in term.run("SELECT v FROM vt;")
    assert FULL_V in term.run("SELECT v FROM vt\\G")
    assert "abbreviated" in term.run("vectors short")
    assert "(8 dims)" in term.run("SELECT v FROM vt;")


def test_batch_output_stays_exact(run):
    out = run("-t", input=VECTOR_TABLE + VECTOR_ROW + "SELECT v FROM vt;")
    assert out.returncode == 0, out.stderr
    assert FULL_V in out.stdout
    out = run("-e", VECTOR_TABLE + VECTOR_ROW + "SELECT v FROM vt;")
    assert FULL_V in out.stdout and "dims" not in out.stdout


def test_batch_scripts_with_delimiter_tee_and_refused_commands(run, tmp_path):
    script = ("tee out.log\nSELECT 1 AS a;\ndelimiter $$\nSELECT 'x;y' AS b$$\nDELIMITER ;\n"
              "pager less\nSELECT 2 AS c;\nnotee\nSELECT 3 AS d;\n")
    out = run(input=script)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["Logging to file 'out.log'", "a", "1", "b", "x;y", "c", "2",
                                       "Outfile disabled.", "d", "3"]
    assert "x;y" in (tmp_path / "out.log").read_text() and "d\n3" not in (tmp_path / "out.log").read_text()
    refused = run(input="SELECT 1 AS a;\nconnect\nSELECT 2 AS b;\n")
    assert refused.returncode == 1
    assert refused.stdout == "a\n1\n"
    assert "ERROR at line 2: command 'connect' is not supported" in refused.stderr
    forced = run("-f", input="query_attributes n v\nSELECT 2 AS b;\n")
    assert forced.stdout == "b\n2\n" and "command 'query_attributes' is not supported" in forced.stderr


def test_command_line_options(run, tmp_path):
    out = run("--delimiter", "//", "--tee", "t.log", input="SELECT 'a;b' AS x //\n")
    assert out.stdout == "x\na;b\n", out.stderr
    assert "a;b" in (tmp_path / "t.log").read_text()
    assert re.search(r"--full-vectors", run("--help").stdout)


def test_use_and_session_statements_in_the_shell(terminal, run):
    term = terminal()
    assert "Database changed" in term.run("use main")
    assert "ERROR 1049 (42000): Unknown database 'nope'" in term.run("\\u nope")
    out = term.run("SET @greeting = 'hi'; SELECT @greeting AS g, DATABASE() AS db;")
    assert "| hi | main |" in out
    out = run(input="use main\nSHOW DATABASES;\nSET NAMES utf8mb4;\nSELECT @@character_set_client AS cs;\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "Database\ninformation_schema\nmain\ncs\nutf8mb4\n"


def test_mysql_ddl_through_the_shell(run):
    script = ("CREATE TABLE u (email varchar(50) NOT NULL UNIQUE, n int DEFAULT 5) ENGINE=InnoDB;\n"
              "INSERT INTO u VALUES ('a@x', 1);\nINSERT INTO u (email) VALUES ('b@x');\n"
              "SELECT * FROM u ORDER BY id;\nINSERT INTO u VALUES ('a@x', 2);\n")
    out = run(input=script)
    assert out.returncode == 1
    assert out.stdout == "id\temail\tn\n1\ta@x\t1\n2\tb@x\t5\n"
    assert "ERROR 1062 (23000) at line 5: Duplicate entry 'a@x' for key 'email'" in out.stderr


def test_set_autocommit_and_mysql_answers_in_the_shell(run):
    script = ("CREATE TABLE k (name string, n int);\nSET autocommit = 0;\nINSERT INTO k VALUES ('Ann', 1);\n"
              "ROLLBACK;\nSELECT COUNT(*) AS c FROM k;\nSET autocommit = 1;\n"
              "INSERT INTO k VALUES ('Ann', 1), ('bob', 2);\nSELECT name FROM k WHERE name = 'ANN';\n"
              "SELECT name, n FROM k GROUP BY n;\n")
    out = run(input=script)
    assert out.stdout == "c\n0\nname\nAnn\n"
    assert out.returncode == 1
    assert "ERROR 1055 (42000) at line 9: Expression #1 of SELECT list is not in GROUP BY clause" in out.stderr


def test_a_mysqldump_file_loads(run, tmp_path):
    """mysqldump's output: executable comments, SET of session variables, DROP/CREATE with MySQL
    constraints and options, LOCK TABLES around multi-row INSERTs."""
    dump = (Path(__file__).parent / "mysqldump_products.sql").read_text()
    out = run("shop.db", input=dump)
    assert out.returncode == 0, out.stderr
    out = run("shop.db", "-e", "SELECT id, sku, title, price FROM products ORDER BY id; SHOW FULL TABLES;"
              "INSERT INTO products (sku) VALUES ('A-1')")
    assert out.stdout.splitlines()[:5] == ["id\tsku\ttitle\tprice", "1\tA-1\tLamp\t19.9", "2\tB-2\tDesk\t120",
                                           "Tables_in_shop\tTable_type", "products\tBASE TABLE"]
    assert "ERROR 1062 (23000) at line 1: Duplicate entry 'A-1' for key 'sku'" in out.stderr
