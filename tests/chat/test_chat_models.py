"""CREATE / SHOW / DESCRIBE / DROP CHAT MODEL as Manticore's manual ("Conversational search") writes them."""
from __future__ import annotations

import pytest

import tesseradb
from tesseradb import errors


@pytest.fixture
def cur():
    con = tesseradb.connect(":memory:", autocommit=True)
    yield con.cursor()
    con.close()


def test_manticores_examples(cur):
    cur.execute("CREATE CHAT MODEL assistant (\n    model='openai:gpt-4o-mini'\n);")
    cur.execute("""CREATE CHAT MODEL support_assistant (
    model='openai:gpt-4o-mini',
    api_key='your-provider-api-key',
    base_url='http://host.docker.internal:8787/v1',
    timeout=60,
    retrieval_limit=5,
    max_document_length=3000
);""")
    rows = cur.execute("SHOW CHAT MODELS;").fetchall()
    assert [d[0] for d in cur.description] == ["name", "model", "created_at"]
    assert [r[:2] for r in rows] == [("assistant", "openai:gpt-4o-mini"), ("support_assistant", "openai:gpt-4o-mini")]
    described = dict(cur.execute("DESCRIBE CHAT MODEL support_assistant;").fetchall())
    assert [d[0] for d in cur.description] == ["property", "value"]
    assert described["api_key"] == "HIDDEN" and described["base_url"] == "http://host.docker.internal:8787/v1"
    assert (described["timeout"], described["retrieval_limit"], described["max_document_length"]) == ("60", "5", "3000")
    assert dict(cur.execute("DESCRIBE CHAT MODEL assistant").fetchall())["retrieval_limit"] == "5"   # the default
    cur.execute("DROP CHAT MODEL assistant;")
    cur.execute("DROP CHAT MODEL IF EXISTS assistant;")
    assert [r[0] for r in cur.execute("SHOW CHAT MODELS").fetchall()] == ["support_assistant"]


@pytest.mark.parametrize("sql, words", [
    ("CREATE CHAT MODEL a (model='gpt-4o')", "provider:model"),
    ("CREATE CHAT MODEL a (timeout=5)", "requires model="),
    ("CREATE CHAT MODEL a (model='openai:m', timeout=0)", "timeout must be between 1 and 65536"),
    ("CREATE CHAT MODEL a (model='openai:m', retrieval_limit=51)", "retrieval_limit must be between 1 and 50"),
    ("CREATE CHAT MODEL a (model='openai:m', max_document_length=99)", "max_document_length must be 0 or between"),
    ("CREATE CHAT MODEL a (model='openai:m', colour='red')", "unknown chat model option 'colour'"),
    ("CREATE CHAT MODEL a (model='acme:m')", "has no default endpoint"),
    ("CREATE CHAT MODEL `a-b` (model='openai:m')", "letters, numbers and underscores"),
    ("CREATE CHAT MODEL a (model='openai:m', api_key='<redacted>')", "not a key"),
])
def test_bad_options_are_refused_and_change_nothing(cur, sql, words):
    with pytest.raises(errors.ProgrammingError, match=words) as raised:
        cur.execute(sql)
    assert raised.value.errno == 1064
    assert cur.execute("SHOW CHAT MODELS").fetchall() == []


def test_names_are_unique_and_must_exist(cur):
    cur.execute("CREATE CHAT MODEL a (model='openai:m')")
    with pytest.raises(errors.ProgrammingError, match="already exists"):
        cur.execute("CREATE CHAT MODEL A (model='openai:other')")
    cur.execute("CREATE CHAT MODEL IF NOT EXISTS a (model='openai:other')")
    assert cur.execute("SHOW CHAT MODELS").fetchall()[0][1] == "openai:m"
    for sql in ("DESCRIBE CHAT MODEL nope", "DROP CHAT MODEL nope", "CALL CHAT('q', 't', 'nope')"):
        with pytest.raises(errors.ProgrammingError, match="chat model 'nope' does not exist"):
            cur.execute(sql)


def test_call_chat_arguments(cur):
    cur.execute("CREATE TABLE t (body text, v float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')")
    cur.execute("CREATE CHAT MODEL m (model='openai:m', base_url='http://127.0.0.1:9/v1')")
    with pytest.raises(errors.ProgrammingError, match="CALL CHAT expects"):
        cur.execute("CALL CHAT('q', 't')")
    with pytest.raises(errors.ProgrammingError, match="Table 'main.nope' doesn't exist|nope"):
        cur.execute("CALL CHAT('q', 'nope', 'm')")
    with pytest.raises(errors.ProgrammingError, match="no vector field with model_name"):
        cur.execute("CALL CHAT('q', 't', 'm')")
    with pytest.raises(errors.ProgrammingError, match="has no vector field 'w'"):
        cur.execute("CALL CHAT('q', 't', 'm', '', 'w')")


def test_a_table_named_chat_still_describes(cur):
    cur.execute("CREATE TABLE chat (body text)")
    assert [r[0] for r in cur.execute("DESCRIBE chat").fetchall()] == ["id", "body"]
