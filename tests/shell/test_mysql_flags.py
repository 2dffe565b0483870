"""The mysql client's flags and DuckDB's output modes, help from the package, unknown backslash
commands, and no file left behind by a mistyped name (issue 22)."""
from __future__ import annotations

import json

SETUP = "CREATE TABLE t (a int, b text); INSERT INTO t (a, b) VALUES (1, 'x,y'), (2, NULL);"


def test_database_flag_names_the_file_and_credentials_are_explained(run, tmp_path):
    out = run("-D", "app.db", "-u", "root", "-p", "-e", SETUP + "SELECT a FROM t")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "a\n1\n2\n"
    assert "an embedded database file has no users" in out.stderr
    assert (tmp_path / "app.db").exists()
    again = run("--database", "app.db", "-N", "-e", "SELECT COUNT(*) FROM t")
    assert again.stdout == "2\n"


def test_output_modes(run):
    run("db.db", "-e", SETUP)
    query = "SELECT a, b FROM t ORDER BY a"
    assert run("db.db", "--csv", "-e", query).stdout == 'a,b\n1,"x,y"\n2,\n'
    assert run("db.db", "--csv", "-N", "-e", query).stdout == '1,"x,y"\n2,\n'
    assert json.loads(run("db.db", "--json", "-e", query).stdout) == [{"a": 1, "b": "x,y"}, {"a": 2, "b": None}]
    assert run("db.db", "--html", "-e", query).stdout == (
        "<TABLE BORDER=1>\n<TR><TH>a</TH><TH>b</TH></TR>\n<TR><TD>1</TD><TD>x,y</TD></TR>\n"
        "<TR><TD>2</TD><TD>NULL</TD></TR>\n</TABLE>\n")
    assert run("db.db", "--markdown", "-e", query).stdout == "| a | b |\n|---|---|\n| 1 | x,y |\n| 2 | NULL |\n"
    assert run("db.db", "-B", "-e", query).stdout == "a\tb\n1\tx,y\n2\tNULL\n"
    assert run("db.db", "-E", "-e", "SELECT a FROM t WHERE a = 1").stdout == (
        "*************************** 1. row ***************************\na: 1\n")


def test_help_comes_from_the_package(run):
    out = run(input="help contents\nhelp select\nhelp create\nhelp no_such_topic\n")
    assert "following topics" in out.stdout and "   LOAD DATA" in out.stdout
    assert "Name: 'SELECT'" in out.stdout and "knn(col, k" in out.stdout
    assert "Name: 'CREATE TABLE'" in out.stdout
    assert "Nothing found" in out.stdout
    assert "docs/shell.md" not in run("-e", "help").stdout


def test_an_unknown_backslash_command_is_refused(run):
    out = run("-e", "\\j")
    assert out.returncode == 1
    assert "Unknown command '\\j'." in out.stderr
    assert "1064" not in out.stderr


def test_a_mistyped_file_leaves_nothing_behind(run, tmp_path):
    out = run("tt.db", "-e", "SHOW TABLES")
    assert out.returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("tt")) == []
    run("kept.db", "-e", "CREATE TABLE k (a int)")
    assert (tmp_path / "kept.db").exists()


def test_help_lists_every_subcommand(run):
    out = run("-h")
    assert "tessera serve DB" in out.stdout and "tessera embed SOURCE OUTPUT" in out.stdout
