"""What GUI tools probe over ``tessera serve`` answers as in-process (issue 22): SHOW ENGINES / CHARSET /
COLLATION / PLUGINS / GRANTS and information_schema (ENGINE, the collation columns, the declared column
types), with PyMySQL and the real mariadb client over a real socket. mysql-mimic's own answers
('MinervaSQL', 'utf8mb4_general_ci ') never reach a client."""
from __future__ import annotations

import tesseradb
from tests.server.support import connect, mariadb

PROBES = [
    "SELECT TABLE_NAME, ENGINE, TABLE_COLLATION FROM information_schema.TABLES",
    "SELECT * FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'docs' ORDER BY TABLE_NAME",
    "SELECT * FROM information_schema.COLUMNS ORDER BY TABLE_NAME, ORDINAL_POSITION",
    "SELECT * FROM information_schema.SCHEMATA",
    "SELECT * FROM information_schema.ENGINES",
    "SELECT * FROM information_schema.CHARACTER_SETS",
    "SELECT COLLATION_NAME, CHARACTER_SET_NAME, IS_DEFAULT FROM information_schema.COLLATIONS",
    "SHOW ENGINES", "SHOW STORAGE ENGINES", "SHOW CHARSET", "SHOW CHARACTER SET LIKE 'utf8%'",
    "SHOW COLLATION", "SHOW COLLATION LIKE 'utf8mb4_bin'", "SHOW PLUGINS", "SHOW GRANTS",
    # keys, as ORMs and GUI row editors look them up (issue 36)
    "SELECT * FROM information_schema.STATISTICS ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX",
    "SELECT * FROM information_schema.KEY_COLUMN_USAGE ORDER BY TABLE_NAME, CONSTRAINT_NAME",
    "SELECT * FROM information_schema.TABLE_CONSTRAINTS ORDER BY TABLE_NAME, CONSTRAINT_NAME",
    "SHOW INDEX FROM notes", "SHOW KEYS FROM pages",
]


def _tables(server) -> None:
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("CREATE TABLE pages (title varchar(255) NOT NULL DEFAULT '', n int, body text)")
        cur.execute("CREATE TABLE notes (note_id int PRIMARY KEY AUTO_INCREMENT, body mediumtext, "
                    "slug varchar(40) UNIQUE)")


def test_the_server_answers_every_probe_as_in_process(server, db_file):
    _tables(server)
    local = tesseradb.connect(db_file)
    local.set_variable("external_user", "app")      # the account: who connected (USER() and SHOW GRANTS agree)
    try:
        with connect(server.port) as c, c.cursor() as cur:
            for sql in PROBES:
                cur.execute(sql)
                assert [tuple(r) for r in cur.fetchall()] == local.execute(sql).fetchall(), sql
                assert [d[0] for d in cur.description] == [d[0] for d in local.execute(sql).description], sql
    finally:
        local.close()


def test_information_schema_says_what_the_engine_is(server):
    _tables(server)
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("SELECT TABLE_NAME, ENGINE, TABLE_COLLATION FROM information_schema.TABLES ORDER BY 1")
        assert cur.fetchall() == (("notes", "SQLite", "utf8mb4_0900_ai_ci"), ("pages", "SQLite", "utf8mb4_0900_ai_ci"))
        cur.execute("SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, COLLATION_NAME "
                    "FROM information_schema.COLUMNS WHERE TABLE_NAME = 'pages' ORDER BY ORDINAL_POSITION")
        assert cur.fetchall() == (("id", "bigint", "bigint", "NO", None, None),
                                  ("title", "varchar", "varchar(255)", "NO", "", "utf8mb4_0900_ai_ci"),
                                  ("n", "int", "int", "YES", None, None),
                                  ("body", "text", "text", "YES", None, "utf8mb4_0900_ai_ci"))


def test_what_only_mysql_mimic_has_carries_the_engines_facts(server):
    """A column or table the engine's information_schema lacks: mysql-mimic answers, from our rows."""
    _tables(server)
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("SELECT t.TABLE_NAME, t.ENGINE, t.TABLE_COLLATION, c.COLUMN_TYPE, c.DATETIME_PRECISION "
                    "FROM information_schema.TABLES t JOIN information_schema.COLUMNS c "
                    "ON c.TABLE_NAME = t.TABLE_NAME WHERE t.TABLE_NAME = 'pages' ORDER BY c.ORDINAL_POSITION")
        assert cur.fetchall() == (("pages", "SQLite", "utf8mb4_0900_ai_ci", "bigint", None),
                                  ("pages", "SQLite", "utf8mb4_0900_ai_ci", "varchar(255)", None),
                                  ("pages", "SQLite", "utf8mb4_0900_ai_ci", "int", None),
                                  ("pages", "SQLite", "utf8mb4_0900_ai_ci", "text", None))
        cur.execute("SELECT ROUTINE_NAME FROM information_schema.ROUTINES")
        assert cur.fetchall() == ()
        cur.execute("SELECT TABLE_NAME FROM information_schema.TABLES WHERE ENGINE <> 'SQLite'")
        assert cur.fetchall() == ()


def test_the_mariadb_client_sees_the_same(server, db_file):
    _tables(server)
    sql = ("SELECT TABLE_NAME, ENGINE, TABLE_COLLATION FROM information_schema.TABLES ORDER BY 1;\n"
           "SHOW ENGINES;\nSHOW COLLATION LIKE 'utf8mb4_0900_ai_ci';\nSHOW GRANTS;\n")
    out = mariadb(server.port, "-B", "-N", sql=sql, check=True).stdout.splitlines()
    local = tesseradb.connect(db_file)
    local.set_variable("external_user", "app")
    try:
        expected = [r for q in sql.split(";\n") if q.strip() for r in local.execute(q).fetchall()]
    finally:
        local.close()
    assert out == ["\t".join(str(v) for v in row) for row in expected]
    assert "notes\tSQLite\tutf8mb4_0900_ai_ci" in out and not any("MinervaSQL" in line for line in out)
