"""MySQL habits over ``tessera serve`` that must never lose data or answer wrongly (issue 22): DDL's
implicit commit with autocommit off, the database name qualifying tables, DATE/DATETIME/TIME as wire
types, user variables, and SQLAlchemy reflection and ``DataFrame.to_sql`` with real clients."""
from __future__ import annotations

import datetime as dt

import mysql.connector
import pandas as pd
import pymysql
import sqlalchemy as sa

from tests.server.support import connect, mariadb


def test_ddl_commits_with_autocommit_off(server):
    with connect(server.port, autocommit=False) as c, c.cursor() as cur:     # PyMySQL's default
        cur.execute("CREATE TABLE kept (a int)")
        cur.execute("INSERT INTO kept (a) VALUES (1)")
        cur.execute("CREATE TABLE notes (body text)")            # commits the INSERT, then itself
        cur.execute("INSERT INTO kept (a) VALUES (2)")
        c.rollback()
        cur.execute("SHOW TABLES")
        assert cur.fetchall() == (("kept",), ("notes",))
        cur.execute("SELECT a FROM kept")
        assert cur.fetchall() == ((1,),)


def test_the_database_name_qualifies_tables(server):
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("SELECT DATABASE()")
        assert cur.fetchone() == ("docs",)
        cur.execute("CREATE TABLE `docs`.`pages` (title varchar(255) NOT NULL DEFAULT '', n int)")
        cur.execute("INSERT INTO docs.pages (title, n) VALUES (%s, %s)", ("a", 1))
        cur.execute("UPDATE docs.pages SET n = 2")
        cur.execute("SELECT title, n FROM `docs`.`pages`")
        assert cur.fetchall() == (("a", 2),)
        cur.execute("DESCRIBE `docs`.`pages`")
        assert [r[0] for r in cur.fetchall()] == ["id", "title", "n"]
        cur.execute("SHOW FULL TABLES FROM `docs`")
        assert cur.fetchall() == (("pages", "BASE TABLE"),)
    out = mariadb(server.port, "-B", "-N", sql="SELECT title FROM docs.pages; SHOW TABLES FROM docs;\n",
                  check=True)
    assert out.stdout.split() == ["a", "pages"]


def test_dates_travel_as_mysql_types(server):
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("CREATE TABLE ev (d date, t datetime, tm time, ts timestamp)")
        cur.execute("INSERT INTO ev (d, t, tm, ts) VALUES (%s, %s, %s, %s)",
                    (dt.date(2024, 1, 2), dt.datetime(2024, 1, 2, 3, 4, 5), dt.timedelta(hours=30), "2024-01-02"))
        cur.execute("SELECT d, t, tm, ts FROM ev WHERE t > '2024-01-01' AND ts > '2024-01-01'")
        assert cur.fetchall() == ((dt.date(2024, 1, 2), dt.datetime(2024, 1, 2, 3, 4, 5),
                                   dt.timedelta(hours=30), 1704153600),)
    mc = mysql.connector.connect(host="127.0.0.1", port=server.port, user="app", database="docs")
    try:
        cur = mc.cursor(prepared=True)
        cur.execute("SELECT d, t, tm FROM ev WHERE t > ?", (dt.datetime(2024, 1, 1),))
        assert cur.fetchall() == [(dt.date(2024, 1, 2), dt.datetime(2024, 1, 2, 3, 4, 5), dt.timedelta(hours=30))]
    finally:
        mc.close()
    out = mariadb(server.port, "-B", "-N", sql="SELECT d, t, tm FROM ev;\n", check=True)
    assert out.stdout == "2024-01-02\t2024-01-02 03:04:05\t30:00:00\n"


def test_user_variables_answer_as_in_the_engine(server):
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("SET @x = 5")
        cur.execute("SELECT @x + 1, @unset")
        assert cur.fetchone() == (6, None)
        cur.execute("SET @name := 'tessera'")
        cur.execute("SELECT @name, @@version")
        assert cur.fetchone()[0] == "tessera"


def test_sqlalchemy_reflects_and_pandas_writes(server):
    engine = sa.create_engine(f"mysql+pymysql://app@127.0.0.1:{server.port}/docs")
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("CREATE TABLE pages (title varchar(255) NOT NULL DEFAULT '', n int, "
                                 "at datetime)"))
        columns = {c["name"]: c for c in sa.inspect(engine).get_columns("pages")}
        assert list(columns) == ["id", "title", "n", "at"]
        assert isinstance(columns["title"]["type"], sa.VARCHAR) and columns["title"]["type"].length == 255
        assert columns["title"]["nullable"] is False and columns["title"]["default"] == "''"
        assert isinstance(columns["at"]["type"], sa.DATETIME)
        table = sa.Table("pages", sa.MetaData(), autoload_with=engine)
        assert table.c.keys() == ["id", "title", "n", "at"]
        frame = pd.DataFrame({"name": ["a", "b"], "score": [1.5, 2.5],
                              "seen": [dt.datetime(2024, 1, 1), dt.datetime(2024, 2, 1, 12)]})
        frame.to_sql("scores", engine, if_exists="replace", index=False)
        frame.to_sql("scores", engine, if_exists="append", index=False)
        assert len(pd.read_sql("SELECT * FROM scores", engine)) == 4
        frame.to_sql("scores", engine, if_exists="replace", index=False)
        back = pd.read_sql("SELECT name, score, seen FROM scores ORDER BY name", engine)
        assert back.to_dict("list") == frame.to_dict("list")
        assert str(back["seen"].dtype).startswith("datetime64")
    finally:
        engine.dispose()


def test_another_database_is_refused(server):
    with connect(server.port) as c, c.cursor() as cur:
        try:
            cur.execute("SELECT * FROM elsewhere.pages")
        except pymysql.err.MySQLError as exc:
            assert exc.args[0] == 1146
        else:
            raise AssertionError("a table of another database was found")


def test_gui_probes_answer_as_mysql(server):
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("SHOW ENGINES")
        assert [d[0] for d in cur.description] == ["Engine", "Support", "Comment", "Transactions", "XA",
                                                    "Savepoints"]
        assert cur.fetchall()[0][:2] == ("SQLite", "DEFAULT")
        cur.execute("SHOW COLLATION LIKE 'utf8mb4_bin'")
        assert cur.fetchone()[:3] == ("utf8mb4_bin", "utf8mb4", 46)
        cur.execute("SHOW GRANTS")
        assert cur.fetchone()[0].startswith("GRANT ALL PRIVILEGES")


def test_on_duplicate_key_update_with_prepared_statements(server):
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("CREATE TABLE u (k int PRIMARY KEY, name text)")
        cur.execute("INSERT INTO u VALUES (%s, %s) ON DUPLICATE KEY UPDATE name = VALUES(name)", (1, "a"))
        cur.execute("INSERT INTO u VALUES (%s, %s) ON DUPLICATE KEY UPDATE name = VALUES(name)", (1, "b"))
    mc = mysql.connector.connect(host="127.0.0.1", port=server.port, user="app", database="docs")
    try:
        cur = mc.cursor(prepared=True)
        cur.execute("INSERT INTO u (k, name) VALUES (?, ?) ON DUPLICATE KEY UPDATE name = VALUES(name)", (1, "c"))
        cur.execute("INSERT INTO u (k, name) VALUES (?, ?) ON DUPLICATE KEY UPDATE name = ?", (2, "d", "e"))
        cur.execute("INSERT INTO u (k, name) VALUES (?, ?) ON DUPLICATE KEY UPDATE name = ?", (2, "d", "e"))
        mc.commit()
        cur.execute("SELECT k, name FROM u ORDER BY k")
        assert cur.fetchall() == [(1, "c"), (2, "e")]
    finally:
        mc.close()
