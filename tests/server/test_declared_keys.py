"""Keys declared MySQL's way over ``tessera serve`` (issue 36): a key named ``id`` keeps every value it
is given (0 included) through PyMySQL's execute and executemany, and a repeat is MySQL's 1062 naming
PRIMARY, as the mariadb client shows it."""
from __future__ import annotations

import pymysql
import pytest

from tests.server.support import connect, mariadb


def test_a_key_named_id_keeps_zero_over_the_wire(server):
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute("CREATE TABLE b (id int PRIMARY KEY, body text)")
        cur.execute("INSERT INTO b (id, body) VALUES (0, 'zero'), (5, 'five')")
        cur.execute("SELECT id, body FROM b ORDER BY id")
        assert cur.fetchall() == ((0, "zero"), (5, "five"))
        cur.execute("CREATE TABLE notes (id bigint NOT NULL PRIMARY KEY, body text)")
        cur.executemany("INSERT INTO notes (id, body) VALUES (%s, %s)", [(0, "a"), (1, "b"), (2, "c")])
        cur.executemany("INSERT INTO notes (id, body) VALUES (%s, %s)", [(3, "d"), (4, "e")])
        cur.execute("SELECT id, body FROM notes ORDER BY id")
        assert cur.fetchall() == ((0, "a"), (1, "b"), (2, "c"), (3, "d"), (4, "e"))
        with pytest.raises(pymysql.err.IntegrityError) as info:
            cur.executemany("INSERT INTO notes (id, body) VALUES (%s, %s)", [(5, "f"), (2, "again")])
        assert info.value.args == (1062, "Duplicate entry '2' for key 'PRIMARY'")
        cur.execute("SELECT count(*) FROM notes")
        assert cur.fetchone() == (5,)                   # the failed batch changed nothing
    shown = mariadb(server.port, sql="INSERT INTO b (id, body) VALUES (0, 'again');\n")
    assert "ERROR 1062 (23000)" in shown.stderr and "Duplicate entry '0' for key 'PRIMARY'" in shown.stderr


KEYED = [
    # inline: the key and a unique column
    "CREATE TABLE users (user_id int NOT NULL AUTO_INCREMENT PRIMARY KEY, email varchar(100) UNIQUE, "
    "name varchar(50))",
    # table level, with a composite UNIQUE and a plain KEY
    "CREATE TABLE products (id int NOT NULL, sku varchar(20), shop int, title text, PRIMARY KEY (id), "
    "UNIQUE KEY shop_sku (shop, sku), KEY by_title (title))",
]


def test_sqlalchemy_reflects_keys_and_automap_maps_the_tables(server):
    import sqlalchemy as sa
    from sqlalchemy.ext.automap import automap_base
    from sqlalchemy.orm import Session

    engine = sa.create_engine(f"mysql+pymysql://app@127.0.0.1:{server.port}/docs")
    try:
        with engine.begin() as conn:
            for ddl in KEYED:
                conn.execute(sa.text(ddl))
        inspector = sa.inspect(engine)
        assert inspector.get_pk_constraint("users")["constrained_columns"] == ["user_id"]
        assert inspector.get_pk_constraint("products")["constrained_columns"] == ["id"]
        assert [(u["name"], u["column_names"]) for u in inspector.get_unique_constraints("products")] == [
            ("shop_sku", ["shop", "sku"])]
        assert [(u["name"], u["column_names"]) for u in inspector.get_unique_constraints("users")] == [
            ("email", ["email"])]
        indexes = {i["name"]: (i["column_names"], bool(i["unique"])) for i in inspector.get_indexes("products")}
        assert indexes == {"shop_sku": (["shop", "sku"], True), "by_title": (["title"], False)}
        base = automap_base()
        base.prepare(autoload_with=engine)
        assert {"users", "products"} <= set(base.classes.keys())
        with Session(engine) as session:
            session.add(base.classes.users(user_id=0, email="zero@example.com", name="zero"))
            session.add(base.classes.products(id=0, sku="a", shop=1, title="first"))
            session.commit()
            assert session.get(base.classes.products, 0).title == "first"
            # user_id is AUTO_INCREMENT: 0 generates the next value, as in MySQL
            assert [u.email for u in session.query(base.classes.users).all()] == ["zero@example.com"]
    finally:
        engine.dispose()


def test_show_index_and_information_schema_over_pymysql(server):
    with connect(server.port) as c, c.cursor() as cur:
        for ddl in KEYED:
            cur.execute(ddl)
        cur.execute("SHOW INDEX FROM products")
        names = [d[0] for d in cur.description]
        assert names[:5] == ["Table", "Non_unique", "Key_name", "Seq_in_index", "Column_name"]
        assert [r[1:5] for r in cur.fetchall()] == [
            (0, "PRIMARY", 1, "id"), (0, "shop_sku", 1, "shop"), (0, "shop_sku", 2, "sku"), (1, "by_title", 1, "title")]
        cur.execute("SELECT CONSTRAINT_NAME, COLUMN_NAME, ORDINAL_POSITION FROM information_schema.KEY_COLUMN_USAGE "
                    "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'users' ORDER BY CONSTRAINT_NAME")
        assert cur.fetchall() == (("PRIMARY", "user_id", 1), ("email", "email", 1))
        cur.execute("SELECT CONSTRAINT_NAME, CONSTRAINT_TYPE FROM information_schema.TABLE_CONSTRAINTS "
                    "WHERE TABLE_NAME = 'products' ORDER BY CONSTRAINT_NAME")
        assert cur.fetchall() == (("PRIMARY", "PRIMARY KEY"), ("shop_sku", "UNIQUE"))
        cur.execute("SELECT INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, NON_UNIQUE FROM information_schema.STATISTICS "
                    "WHERE TABLE_NAME = 'users'")
        assert cur.fetchall() == (("PRIMARY", 1, "user_id", 0), ("email", 1, "email", 0))
        cur.execute("SHOW CREATE TABLE users")
        assert cur.fetchone()[1] == ("CREATE TABLE `users` (\n  `user_id` int NOT NULL AUTO_INCREMENT,\n"
                                     "  `email` varchar(100),\n  `name` varchar(50),\n  PRIMARY KEY (`user_id`),\n"
                                     "  UNIQUE KEY `email` (`email`)\n)")
        cur.execute("SELECT USER()")
        user = cur.fetchone()[0]
        cur.execute("SHOW GRANTS")
        assert cur.description[0][0].startswith(f"Grants for {user.split('@')[0]}@")
        assert f"TO `{user.split('@')[0]}`@" in cur.fetchone()[0]


def test_the_mariadb_client_shows_the_keys(server):
    with connect(server.port) as c, c.cursor() as cur:
        cur.execute(KEYED[1])
    shown = mariadb(server.port, "--batch", sql="SHOW KEYS FROM products;\n", check=True).stdout.splitlines()
    assert shown[0].split("\t")[:5] == ["Table", "Non_unique", "Key_name", "Seq_in_index", "Column_name"]
    assert [line.split("\t")[2:5] for line in shown[1:]] == [
        ["PRIMARY", "1", "id"], ["shop_sku", "1", "shop"], ["shop_sku", "2", "sku"], ["by_title", "1", "title"]]
