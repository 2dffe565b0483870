"""SQLAlchemy (mysql+pymysql dialect) and pandas.read_sql against `tessera serve`."""
from __future__ import annotations

import pandas as pd
import pytest
import sqlalchemy as sa

from tests.server.support import DOCS, load_docs


@pytest.fixture
def engine(server):
    eng = sa.create_engine(f"mysql+pymysql://app@127.0.0.1:{server.port}/docs")
    yield eng
    eng.dispose()


def test_engine_connects_and_reflects(server, engine):
    load_docs(server.port)
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT COUNT(*) FROM docs")).scalar() == len(DOCS)
    inspector = sa.inspect(engine)
    assert inspector.get_table_names() == ["docs"]
    # get_columns() parses SHOW CREATE TABLE, which prints our own DDL: see docs/server.md, limits


def test_bound_parameters_and_transactions(server, engine):
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE t (s text, n int)"))
        conn.execute(sa.text("INSERT INTO t (s, n) VALUES (:s, :n)"),
                     [{"s": "it's", "n": 1}, {"s": "x'); DROP TABLE t; --", "n": 2}])
    with engine.connect() as conn:
        conn.execute(sa.text("INSERT INTO t (s, n) VALUES ('never', 3)"))
        conn.rollback()
        rows = conn.execute(sa.text("SELECT s, n FROM t ORDER BY n")).all()
    assert [tuple(r) for r in rows] == [("it's", 1), ("x'); DROP TABLE t; --", 2)]


def test_pandas_read_sql_knn(server, engine):
    load_docs(server.port)
    frame = pd.read_sql(sa.text("SELECT id, title, knn_dist() AS dist FROM docs "
                                "WHERE knn(chunks, 2, :q) AND tag = :tag"),
                        engine, params={"q": "certificate renewal", "tag": "ops"})
    assert list(frame.columns) == ["id", "title", "dist"]
    assert frame["title"].tolist()[0] == "Certificates"
    assert frame["dist"].is_monotonic_increasing and str(frame["id"].dtype) == "int64"


def test_pandas_read_sql_whole_table(server, engine):
    load_docs(server.port)
    frame = pd.read_sql("SELECT id, title, tag FROM docs ORDER BY id", engine)
    assert frame.to_dict("list") == {"id": [1, 2, 3], "title": [d[0] for d in DOCS], "tag": [d[2] for d in DOCS]}
