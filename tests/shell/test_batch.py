"""Batch mode (standard input is not a terminal, or -e): mysql -B habits, exit codes, SOURCE."""
from __future__ import annotations

import sys
from pathlib import Path

VECTORS = """
CREATE TABLE t (name text, ok bool, meta json,
  v float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2',
  a float_vector_array knn_type='hnsw' knn_dims='2' hnsw_similarity='l2');
INSERT INTO t (id, name, ok, meta, v, a) VALUES
  (1, 'one', 1, '{"k": [1, 2]}', (0.1, 0.2), [[1, 0], [0.5, 0.25]]),
  (2, NULL, 0, NULL, NULL, []);
SELECT id, name, ok, meta, v, a FROM t ORDER BY id;
"""


def test_tab_separated_with_header(run):
    out = run(input="SELECT 1 AS a, 'x' AS b;\nSELECT 2 AS a;\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "a\tb\n1\tx\na\n2\n"


def test_no_database_is_in_memory_with_a_note(run):
    out = run(input="SELECT 1;")
    assert "in-memory" in out.stderr
    given = run("x.db", input="SELECT 1;")
    assert "in-memory" not in given.stderr


def test_values_print_like_manticore(run):
    out = run(input=VECTORS)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "id\tname\tok\tmeta\tv\ta"
    assert lines[1] == '1\tone\t1\t{"k": [1, 2]}\t0.100000,0.200000\t[[1.000000,0.000000],[0.500000,0.250000]]'
    assert lines[2] == "2\tNULL\t0\tNULL\tNULL\t[]"


def test_table_option_draws_borders_with_wide_characters(run):
    out = run("-t", input="SELECT '日本語' AS word, 42 AS n UNION ALL SELECT 'ab', 7;")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "+--------+----+",
        "| word   | n  |",
        "+--------+----+",
        "| 日本語 | 42 |",
        "| ab     |  7 |",
        "+--------+----+",
    ]


def test_skip_column_names_and_escaping(run):
    out = run("-N", input="SELECT 'a\tb' AS x, 'line\\nbreak' AS y;")
    assert out.stdout == "a\\tb\tline\\nbreak\n"
    raw = run("-N", "-r", input="SELECT 'a\tb' AS x;")
    assert raw.stdout == "a\tb\n"


def test_empty_result_prints_nothing(run):
    out = run(input="CREATE TABLE e (a int); SELECT * FROM e;")
    assert out.returncode == 0
    assert out.stdout == ""


def test_vertical_with_backslash_g(run):
    out = run(input="SELECT 1 AS id, 'two' AS name\\G\n")
    assert out.stdout.splitlines() == [
        "*************************** 1. row ***************************",
        "  id: 1",
        "name: two",
    ]
    assert run("-E", input="SELECT 1 AS id;").stdout.startswith("*" * 27 + " 1. row")


def test_first_error_stops_with_line_and_exit_1(run):
    script = "SELECT 1 AS a;\n\nSELEC 2;\nSELECT 3 AS c;\n"
    out = run(input=script)
    assert out.returncode == 1
    assert out.stdout == "a\n1\n"
    assert out.stderr.splitlines()[-1].startswith("ERROR 1064 (42000) at line 3: ")


def test_error_line_is_where_the_statement_starts(run):
    out = run(input="-- comment\nSELECT 1;\nSELECT *\n  FROM missing\n  WHERE 1;\n")
    assert out.returncode == 1
    assert "ERROR 1146 (42S02) at line 3: table 'missing' does not exist" in out.stderr


def test_force_reports_errors_and_continues(run):
    out = run("--force", input="SELECT 1 AS a;\nSELEC 2;\nSELECT 3 AS c;\nDROP TABLE nope;\n")
    assert out.returncode == 1
    assert out.stdout == "a\n1\nc\n3\n"
    errors = [line for line in out.stderr.splitlines() if line.startswith("ERROR")]
    assert errors[0].startswith("ERROR 1064 (42000) at line 2:")
    assert errors[1].startswith("ERROR 1146 (42S02) at line 4:")


def test_execute_option(run):
    out = run("-e", "SELECT 1 AS a; SELECT 'x' AS b")
    assert out.returncode == 0
    assert out.stdout == "a\n1\nb\nx\n"
    bad = run("-e", "SELECT 1;\nSELECT nope FROM nowhere")
    assert bad.returncode == 1
    assert "ERROR 1146 (42S02) at line 2:" in bad.stderr


def test_verbose_echoes_statements(run):
    out = run("-v", input="SELECT 1 AS a;")
    assert out.stdout == "--------------\nSELECT 1 AS a\n--------------\n\na\n1\n"
    counts = run("-vv", input="CREATE TABLE t (a int); INSERT INTO t (a) VALUES (1), (2); SELECT a FROM t;")
    assert "Query OK, 2 rows affected\n" in counts.stdout
    assert "2 rows in set\n" in counts.stdout
    timed = run("-vvv", input="SELECT 1;")
    assert "1 row in set (0." in timed.stdout


def test_database_file_persists_between_runs(run, tmp_path):
    db = str(tmp_path / "p.db")
    assert run(db, input="CREATE TABLE n (a int); INSERT INTO n (a) VALUES (7);").returncode == 0
    assert run(db, "-N", "-e", "SELECT a FROM n").stdout == "7\n"


def test_transactions_in_scripts(run):
    script = ("CREATE TABLE n (a int);\nBEGIN;\nINSERT INTO n (a) VALUES (1);\nROLLBACK;\n"
              "INSERT INTO n (a) VALUES (2);\nSELECT a FROM n;\n")
    assert run("-N", input=script).stdout == "2\n"


def test_source_runs_a_file_relative_to_the_working_directory(run, tmp_path):
    (tmp_path / "inner.sql").write_text("SELECT 'inner' AS s;\n")
    out = run(input="SELECT 'before' AS s;\nsource inner.sql\n\\. inner.sql\nSOURCE inner.sql;\nSELECT 'after' AS s;\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["s", "before", "s", "inner", "s", "inner", "s", "inner", "s", "after"]


def test_error_inside_a_sourced_file_names_it(run, tmp_path):
    (tmp_path / "bad.sql").write_text("SELECT 1;\n\nSELEC 2;\n")
    out = run(input="source bad.sql\nSELECT 'not reached';\n")
    assert out.returncode == 1
    assert "ERROR 1064 (42000) at line 3 in file: 'bad.sql':" in out.stderr
    assert "not reached" not in out.stdout


def test_source_of_a_missing_file(run):
    out = run(input="source nowhere.sql\n")
    assert out.returncode == 1
    assert "ERROR at line 1: Failed to open file 'nowhere.sql', error: 2" in out.stderr


def test_quit_stops_a_script(run):
    out = run("-N", input="SELECT 1;\nquit\nSELECT 2;\n")
    assert out.returncode == 0
    assert out.stdout == "1\n"


def test_statement_without_final_semicolon_runs(run):
    assert run("-N", input="SELECT 5").stdout == "5\n"


def test_semicolons_in_strings_and_comments_do_not_split(run):
    out = run("-N", input="SELECT 'a;b' /* ; */ AS x; -- ;\n# ;\nSELECT \"c;d\";")
    assert out.stdout == "a;b\nc;d\n"


def test_warnings_are_counted_and_shown(run):
    out = run("-vv", "--show-warnings", input="DROP TABLE IF EXISTS nope;")
    assert "Query OK, 0 rows affected, 1 warning\n" in out.stdout
    assert "Note (Code 1051): Unknown table 'nope'" in out.stdout


def test_outfile_and_load_data_through_the_shell(run, tmp_path):
    script = ("CREATE TABLE a (name text, n int);\nINSERT INTO a (name, n) VALUES ('x', 1), ('y', 2);\n"
              "SELECT name, n FROM a INTO OUTFILE 'a.csv';\n"
              "CREATE TABLE b (name text, n int);\nLOAD DATA INFILE 'a.csv' INTO TABLE b;\n"
              "SELECT name, n FROM b ORDER BY n;\n")
    out = run("-vv", input=script)
    assert out.returncode == 0, out.stderr
    assert "Query OK, 2 rows affected" in out.stdout
    assert out.stdout.rstrip().endswith("name\tn\nx\t1\ny\t2\n2 rows in set")
    assert (tmp_path / "a.csv").exists()


def test_help_and_version(run):
    assert "source" in run(input="help\n").stdout
    out = run("--version")
    assert out.returncode == 0 and "tessera" in out.stdout
    assert "--force" in run("--help").stdout


def test_ctrl_c_interrupts_the_statement_and_stops_the_script(shell_env, tmp_path):
    import signal
    import subprocess

    tessera = str(Path(sys.executable).parent / "tessera")
    proc = subprocess.Popen([tessera, "-v", "--force"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=shell_env, cwd=tmp_path)
    proc.stdin.write("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 2000000000)\n"
                     "SELECT COUNT(*) FROM n;\nSELECT 'after';\n")
    proc.stdin.close()
    assert proc.stdout.readline() == "--------------\n"      # the statement is about to run
    import time
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)
    out, err = proc.stdout.read(), proc.stderr.read()
    assert proc.returncode == 1
    assert "ERROR 1317 (70100) at line 1: Query execution was interrupted" in err
    assert "after" not in out


def test_timeout_interrupts_a_long_statement(run):
    out = run("--timeout", "0.5", "-e", "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n "
              "WHERE x < 2000000000) SELECT COUNT(*) FROM n")
    assert out.returncode == 1
    assert "ERROR 1317 (70100) at line 1: Query execution was interrupted" in out.stderr


def test_unopenable_database(run, tmp_path):
    out = run(str(tmp_path / "missing_dir" / "x.db"), "-e", "SELECT 1")
    assert out.returncode == 1
    assert out.stderr.startswith("ERROR ")
