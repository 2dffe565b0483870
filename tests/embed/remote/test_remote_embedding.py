"""Remote embedding endpoints in Manticore's syntax, against loopback stand-ins of the published APIs
(OpenAI, Ollama, Voyage, Jina) that serve the local model's vectors."""
from __future__ import annotations

import numpy as np
import pytest

import tesseradb
from standin import KEY

ROWS = [(1, "smartphone", "latest mobile device with advanced features"),
        (2, "laptop", "portable computer for work and gaming"),
        (3, "backup", "restore the database from last night's snapshot")]


def _create(con, server, model="openai/text-embedding-3-small", extra=""):
    con.execute(f"CREATE TABLE p (title TEXT, description TEXT, v FLOAT_VECTOR KNN_TYPE='hnsw' "
                f"HNSW_SIMILARITY='cosine' MODEL_NAME='{model}' FROM='title,description' "
                f"API_KEY='{KEY}' API_URL='{server.base}/v1/embeddings' {extra})")


def _vectors(con):
    return np.array([r[0] for r in con.execute("SELECT v FROM p ORDER BY id").fetchall()], np.float32)


def _expected(local_model, rows=ROWS):
    return local_model.embed([f"{t} {d}" for _, t, d in rows])


# -- the stand-ins follow the published APIs: their official clients drive them ----------------------
def test_the_openai_client_drives_the_standin(server, local_model):
    import openai
    client = openai.OpenAI(base_url=server.base + "/v1", api_key=KEY, max_retries=0)
    answer = client.embeddings.create(model="text-embedding-3-small", input=["hello world", "vector search"])
    got = np.array([d.embedding for d in answer.data], np.float32)     # the client asked for base64
    np.testing.assert_allclose(got, local_model.embed(["hello world", "vector search"]), atol=1e-6)
    assert answer.usage.total_tokens > 0 and server.requests[0][2]["encoding_format"] == "base64"


def test_the_ollama_client_drives_the_standin(open_server, local_model):
    import ollama
    answer = ollama.Client(host=open_server.base).embed(model="nomic-embed-text", input=["hello world", "a b"])
    np.testing.assert_allclose(np.array(answer.embeddings, np.float32), local_model.embed(["hello world", "a b"]),
                               atol=1e-6)


def test_the_voyage_client_drives_the_standin(server, local_model):
    import voyageai
    client = voyageai.Client(api_key=KEY, base_url=server.base + "/v1", max_retries=0)
    answer = client.embed(["hello world"], model="voyage-3.5-lite", input_type="query")
    np.testing.assert_allclose(np.array(answer.embeddings, np.float32), local_model.embed(["hello world"]), atol=1e-6)
    assert server.requests[0][2]["input_type"] == "query"


# -- Manticore's DDL, as its manual gives it ----------------------------------------------------------
def test_manticores_remote_model_ddl_runs_unchanged(open_server, local_model, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", open_server.base + "/v1")    # where the official client looks
    con = tesseradb.connect()
    con.execute("""CREATE TABLE products_openai (
    title TEXT,
    description TEXT,
    embedding_vector FLOAT_VECTOR KNN_TYPE='hnsw' HNSW_SIMILARITY='l2'
    MODEL_NAME='openai/text-embedding-ada-002' FROM='title,description' API_KEY='...'
)""")
    con.execute("""INSERT INTO products_openai (title, description) VALUES
('smartphone', 'latest mobile device with advanced features'),
('laptop', 'portable computer for work and gaming')""")
    got = np.array([r[0] for r in con.execute("SELECT embedding_vector FROM products_openai ORDER BY title DESC")],
                   np.float32)
    np.testing.assert_allclose(got, _expected(local_model, ROWS[:2]), atol=1e-6)
    hits = con.execute("SELECT title FROM products_openai WHERE knn(embedding_vector, 1, 'a computer for gaming')")
    assert hits.fetchall() == [("laptop",)]
    assert {b["model"] for _, _, b in open_server.requests} == {"text-embedding-ada-002"}


def test_manticores_custom_url_ddl_and_the_provider_colon_form(open_server, local_model):
    con = tesseradb.connect()
    con.execute(f"""CREATE TABLE products_openai_custom (
    title TEXT,
    description TEXT,
    embedding_vector FLOAT_VECTOR KNN_TYPE='hnsw' HNSW_SIMILARITY='l2'
    MODEL_NAME='openai:openai/text-embedding-ada-002' FROM='title,description'
    API_KEY='***' API_URL='{open_server.base}/v1/embeddings' API_TIMEOUT='30'
)""")
    con.execute("INSERT INTO products_openai_custom (title, description) VALUES ('laptop', 'portable computer')")
    assert {b["model"] for _, _, b in open_server.requests} == {"openai/text-embedding-ada-002"}   # sent unchanged
    show = con.execute("SHOW CREATE TABLE products_openai_custom").fetchall()[0][1]
    assert "api_key='<redacted>'" in show and "***" not in show and "api_timeout='30'" in show


@pytest.mark.parametrize("model, url, shape", [
    ("openai/text-embedding-3-small", "/v1", "openai"),             # a base URL: LM Studio, vLLM, Ollama's /v1
    ("voyage/voyage-3.5-lite", "/v1/embeddings", "voyage"),
    ("jina/jina-embeddings-v3", "/v1/embeddings", "jina"),
    ("ollama:nomic-embed-text", "", "ollama"),                     # Ollama's native API at its host
])
def test_every_provider_gives_the_local_models_vectors(server, local_model, model, url, shape):
    con = tesseradb.connect()
    con.execute(f"CREATE TABLE p (title TEXT, description TEXT, v FLOAT_VECTOR KNN_TYPE='hnsw' "
                f"HNSW_SIMILARITY='cosine' MODEL_NAME='{model}' FROM='title,description' "
                f"API_KEY='{KEY}' API_URL='{server.base}{url}')")
    con.executemany("INSERT INTO p (id, title, description) VALUES (?, ?, ?)", ROWS)
    np.testing.assert_allclose(_vectors(con), _expected(local_model), atol=1e-6)
    assert con.execute("SELECT id FROM p WHERE knn(v, 1, 'restore a snapshot')").fetchall() == [(3,)]
    path, _, body = server.requests[-1]
    assert path == ("/api/embed" if shape == "ollama" else "/v1/embeddings")
    if shape == "voyage":
        assert body["input_type"] == "query"             # the knn() text went as a query
    if shape == "jina":
        assert body["task"] == "retrieval.query"


def test_requests_are_batched_and_empty_texts_never_sent(server, local_model):
    con = tesseradb.connect()
    _create(con, server, extra="batch_size='2'")
    rows = [(i, f"title {i}", f"body {i}") for i in range(1, 6)] + [(6, "", "")]
    server.requests.clear()
    con.executemany("INSERT INTO p (id, title, description) VALUES (?, ?, ?)", rows)
    sizes = [len(b["input"]) for _, _, b in server.requests]
    assert sizes == [2, 2, 1] and "" not in server.texts_sent() and " " not in server.texts_sent()
    assert not np.any(_vectors(con)[5])                       # an empty text's vector: zeros, it matches nothing


def test_a_429_with_retry_after_is_waited_for(server, local_model):
    con = tesseradb.connect()
    _create(con, server)
    server.faults = [{"status": 429, "headers": {"Retry-After": "0"}}]
    con.executemany("INSERT INTO p (id, title, description) VALUES (?, ?, ?)", ROWS)
    np.testing.assert_allclose(_vectors(con), _expected(local_model), atol=1e-6)


FAILURES = [
    ([{"status": 429, "headers": {"Retry-After": "3600"}}], "HTTP 429: injected failure (Retry-After 3600 s"),
    ([{"status": 500}] * 4, "HTTP 500: injected failure (after 4 attempts)"),
    ([{"raw": b"{not json"}], "the answer is not JSON"),
    ([{"width": 100}], "the endpoint returned 100-number vectors, the column holds 384"),
    ([{"drop": 1}], "the endpoint returned 2 vectors for 3 texts"),
    ([{"status": 401, "message": f"Incorrect API key provided: {KEY}"}], "HTTP 401: Incorrect API key provided: <redacted>"),
]


@pytest.mark.parametrize("faults, message", FAILURES, ids=["429-too-long", "500", "malformed", "width", "count", "401"])
def test_a_failing_endpoint_is_a_clear_error_and_nothing_is_written(server, faults, message):
    con = tesseradb.connect()
    _create(con, server)
    con.execute("INSERT INTO p (id, title, description) VALUES (9, 'kept', 'row')")
    server.faults = list(faults)
    with pytest.raises(tesseradb.OperationalError) as info:
        con.executemany("INSERT INTO p (id, title, description) VALUES (?, ?, ?)", ROWS)
    assert message in str(info.value) and f"{server.base}/v1/embeddings" in str(info.value)
    assert KEY not in str(info.value)
    assert con.execute("SELECT id FROM p").fetchall() == [(9,)]


@pytest.mark.slow
def test_a_timeout_is_a_clear_error_and_nothing_is_written(server):
    con = tesseradb.connect()
    _create(con, server, extra="api_timeout='1'")
    server.faults = [{"delay": 1.5}] * 4
    with pytest.raises(tesseradb.OperationalError, match=r"no answer within api_timeout=1 seconds \(after 4 attempts\)"):
        con.executemany("INSERT INTO p (id, title, description) VALUES (?, ?, ?)", ROWS)
    assert con.execute("SELECT COUNT(*) FROM p").fetchall() == [(0,)]


# -- keys -----------------------------------------------------------------------------------------------
def test_the_key_is_never_shown_back(server):
    con = tesseradb.connect()
    _create(con, server)
    shown = [con.execute("SHOW CREATE TABLE p").fetchall(), con.execute("DESCRIBE p").fetchall(),
             con.execute("SHOW MODELS").fetchall(),
             con.execute("SELECT * FROM information_schema.columns WHERE table_name = 'p'").fetchall(),
             con.describe("p")]
    assert KEY not in repr(shown)
    create = shown[0][0][1]
    assert "api_key='<redacted>'" in create
    with pytest.raises(tesseradb.ProgrammingError, match="SHOW CREATE TABLE hides the key"):
        con.execute(create.replace("CREATE TABLE `p`", "CREATE TABLE `p2`"))
    with pytest.raises(tesseradb.ProgrammingError) as info:
        con.execute(f"CREATE TABLE q (t TEXT, v FLOAT_VECTOR KNN_TYPE='hnsw' MODEL_NAME='openai/m' FROM='t' "
                    f"API_KEY '{KEY}')")
    assert KEY not in str(info.value)


def test_an_env_key_is_read_at_use_and_shown_as_written(server, local_model, monkeypatch):
    monkeypatch.setenv("TESSERA_TEST_KEY", KEY)
    con = tesseradb.connect()
    con.execute(f"CREATE TABLE p (title TEXT, description TEXT, v FLOAT_VECTOR KNN_TYPE='hnsw' "
                f"MODEL_NAME='openai/m' FROM='title,description' API_KEY='env:TESSERA_TEST_KEY' "
                f"API_URL='{server.base}/v1')")
    create = con.execute("SHOW CREATE TABLE p").fetchall()[0][1]
    assert "api_key='env:TESSERA_TEST_KEY'" in create
    con.execute("DROP TABLE p")
    con.execute(create)                                   # re-runnable: the key is not in the text
    con.executemany("INSERT INTO p (id, title, description) VALUES (?, ?, ?)", ROWS)
    np.testing.assert_allclose(_vectors(con), _expected(local_model), atol=1e-6)
    monkeypatch.delenv("TESSERA_TEST_KEY")
    with pytest.raises(tesseradb.OperationalError, match="environment variable TESSERA_TEST_KEY is not set"):
        con.execute("INSERT INTO p (id, title, description) VALUES (7, 'a', 'b')")


# -- token budgets -----------------------------------------------------------------------------------
def test_without_a_tokenizer_a_text_is_cut_to_a_quarter_of_the_providers_limit_in_characters(server):
    con = tesseradb.connect()
    _create(con, server)
    long = "é" * 5000 + " tail"                       # 2 bytes a character: 10k bytes, over 8192
    con.execute("INSERT INTO p (id, title, description) VALUES (1, ?, '')", (long,))
    sent = server.texts_sent()[-1]
    assert len(sent) == 8192 // 4 and len(sent.encode("utf-8")) <= 8192


def test_chunk_budgets_follow_the_named_tokenizer(server, local_model):
    con = tesseradb.connect()
    con.execute(f"CREATE TABLE c (body TEXT, v FLOAT_VECTOR_ARRAY KNN_TYPE='hnsw' MODEL_NAME='openai/m' FROM='body' "
                f"API_KEY='{KEY}' API_URL='{server.base}/v1' tokenizer='all-MiniLM-L6-v2' "
                f"chunk_strategy='fixed' max_tokens='8')")
    text = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen"
    server.requests.clear()
    con.execute("INSERT INTO c (id, body) VALUES (1, ?)", (text,))
    chunks = server.texts_sent()
    assert len(chunks) == 2 and all(len(local_model.token_offsets(c)) <= 8 for c in chunks)
    assert " ".join(chunks) == text


def test_show_models_lists_a_remote_model_without_contacting_it_or_showing_its_key(server):
    con = tesseradb.connect()
    _create(con, server, extra="query_prefix='search_query: '")
    server.requests.clear()
    cur = con.execute("SHOW MODELS")
    names = [d[0] for d in cur.description]
    row = next(dict(zip(names, r)) for r in cur.fetchall() if r[0] == "openai/text-embedding-3-small")
    assert row["Source"] == f"remote openai {server.base}/v1/embeddings" and row["Dimensions"] == 384
    assert row["Prefixes"] == "query: 'search_query: '" and row["Window"] == 2048 and row["Used_by"] == "p.v"
    assert server.requests == [] and KEY not in repr(row)
