"""Debian's mariadb command-line client against `tessera serve`, in batch (-B) and table (-t) mode."""
from __future__ import annotations

from tests.server.support import DOCS_DDL, mariadb

INSERTS = ("INSERT INTO docs (title, body, tag) VALUES "
           "('Certificates', 'Rotate TLS certificates every 90 days. Use the renew command.', 'ops'), "
           "('Cooking', 'Boil the pasta in salted water for ten minutes.', 'home');")


def test_batch_mode_creates_embeds_and_searches(server):
    script = f"{DOCS_DDL};\n{INSERTS}\n" \
             "SELECT id, title FROM docs WHERE knn(chunks, 1, 'how do I renew my certificates');\n" \
             "SELECT id, LENGTH(chunks) > 0 AS embedded FROM docs ORDER BY id;\n"
    out = mariadb(server.port, "-B", sql=script, check=True).stdout
    assert out.splitlines() == ["id\ttitle", "1\tCertificates", "id\tembedded", "1\t1", "2\t1"]


def test_table_mode_and_client_probes(server):
    mariadb(server.port, "-B", sql=f"{DOCS_DDL};\n{INSERTS}", check=True)
    out = mariadb(server.port, "-t", sql="SELECT id, title FROM docs ORDER BY id; SHOW DATABASES; "
                  "SELECT @@version_comment, DATABASE(), @@autocommit AS ac;", check=True).stdout
    lines = out.splitlines()
    assert lines[:6] == ["+------+--------------+", "| id   | title        |", "+------+--------------+",
                         "|    1 | Certificates |", "|    2 | Cooking      |", "+------+--------------+"]
    assert "| docs               |" in lines and "| information_schema |" in lines
    assert "| @@version_comment | DATABASE() | ac   |" in lines
    assert any(line.startswith("| tesseradb ") and "| docs       |    1 |" in line for line in lines)


def test_errors_carry_our_errno_and_sqlstate(server):
    result = mariadb(server.port, "-B", sql="SELECT * FROM missing;")
    assert result.returncode == 1
    assert "ERROR 1146 (42S02) at line 1: table 'missing' does not exist" in result.stderr


def test_syntax_error_and_force_continues(server):
    result = mariadb(server.port, "-B", "--force", sql="SELEC 1;\nSELECT 2 AS two;")
    assert "ERROR 1064 (42000) at line 1" in result.stderr
    assert result.stdout.splitlines() == ["two", "2"]


def test_vectors_come_back_as_manticore_text(server):
    script = ("CREATE TABLE v (v float_vector knn_type='hnsw' knn_dims='3' hnsw_similarity='l2');\n"
              "INSERT INTO v (id, v) VALUES (7, (0.5, 0.25, 1));\nSELECT id, v FROM v;\n")
    out = mariadb(server.port, "-B", sql=script, check=True).stdout
    assert out.splitlines() == ["id\tv", "7\t0.500000,0.250000,1.000000"]


def test_use_and_unknown_database(server):
    ok = mariadb(server.port, "-B", sql="USE docs; SELECT DATABASE();", database=None, check=True)
    assert ok.stdout.splitlines() == ["DATABASE()", "docs"]
    bad = mariadb(server.port, "-B", sql="USE elsewhere;", database=None)
    assert "ERROR 1049 (42000)" in bad.stderr and "Unknown database 'elsewhere'" in bad.stderr


def test_explicit_transaction_rolls_back(server):
    script = ("CREATE TABLE t (n int);\nBEGIN;\nINSERT INTO t (n) VALUES (1);\nROLLBACK;\n"
              "INSERT INTO t (n) VALUES (2);\nSELECT n FROM t;\n")
    out = mariadb(server.port, "-B", sql=script, check=True).stdout
    assert out.splitlines() == ["n", "2"]
